-- Take a lease if it is free, or extend it if the caller already owns it (used by keeper candidates).
-- KEYS[1] lease; ARGV[1] owner, ARGV[2] TTL ms. Returns {1} when held by the caller, {0, holder} otherwise
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1}
end
return {0, holder}
