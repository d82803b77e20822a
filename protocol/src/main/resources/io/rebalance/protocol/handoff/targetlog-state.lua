-- The log's hash and the run id of the Redis instance answering now, in one step.
-- KEYS[1] the log's hash
local run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
return {run_id, redis.call('HGETALL', KEYS[1])}
