-- A rollback that started the log again (ADR 12) adds the keys that differed when it compared every key, a page at a
-- time, and with the last page ends the log's pending state: from then on the log is complete again.
-- KEYS[1] the set of keys, KEYS[2] the log's hash
-- ARGV[1] the token the log was started again under, ARGV[2] '1' on the last page, ARGV[3..] keys
-- Returns 0, changing nothing, when another rollback started the log again since (its token is pending now).
if redis.call('HGET', KEYS[2], 'pending') ~= ARGV[1] then return 0 end
if #ARGV > 2 then redis.call('SADD', KEYS[1], unpack(ARGV, 3)) end
if ARGV[2] == '1' then redis.call('HDEL', KEYS[2], 'pending') end
return 1
