-- Recovery gave the TARGET route a newer epoch from the fences while Redis kept its data: the log of the old epoch
-- covers the new one (no write ran between: recovery holds the exclusive lease). Only from the epoch it names.
-- KEYS[1] the log's hash; ARGV[1] the old epoch, ARGV[2] the new one
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'epoch', ARGV[2])
return 1
