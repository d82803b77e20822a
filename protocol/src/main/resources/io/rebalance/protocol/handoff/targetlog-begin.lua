-- Starts the target-write log of a flip to TARGET, empty, and notes which Redis instance holds it: a log a restart
-- or a failover may have lost writes of must not pass for complete (TargetWriteLog.read).
-- KEYS[1] the set of keys, KEYS[2] the log's hash
-- ARGV[1] epoch, ARGV[2] target table, ARGV[3] its partition key attribute
-- ARGV[4] (a rollback starting a lost log again, ADR 12) the token it restarts it under: the log stays incomplete
--   ('pending') until that rollback has compared every key and added the ones that differed (targetlog-settle.lua)
local run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
local now = redis.call('TIME')
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[2], 'epoch', ARGV[1], 'table', ARGV[2], 'key', ARGV[3], 'run_id', run_id,
    'started_ms', tostring(now[1] * 1000 + math.floor(now[2] / 1000)))
if ARGV[4] then redis.call('HSET', KEYS[2], 'pending', ARGV[4]) end
return run_id
