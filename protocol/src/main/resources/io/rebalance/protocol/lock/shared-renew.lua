-- Extend a shared lease that has not expired. An expired one is gone for good: its holder must not write.
-- KEYS[1] shared holders, ARGV[1] member, ARGV[2] TTL in ms
-- Returns the lease reply (LeaseReply): {1, member, ttl_ms, expires_ms} | {0, '', -2} when it had expired or was released
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) <= now then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {0, '', -2}
end
local expires = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], 'XX', expires, ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, ARGV[1], tonumber(ARGV[2]), expires}
