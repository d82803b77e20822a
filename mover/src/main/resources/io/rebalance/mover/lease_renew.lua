-- Extend a lease the caller owns. KEYS[1] lease; ARGV[1] owner, ARGV[2] TTL ms
-- Returns {1} when extended, {0, holder} when the caller no longer owns it
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
return {0, holder or ''}
