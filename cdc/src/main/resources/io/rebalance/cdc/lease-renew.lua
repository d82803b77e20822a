-- Renews the tail lease if the caller still holds it. KEYS[1] lease; ARGV[1] owner, ARGV[2] ttl ms.
-- Returns 'OK', or the current holder ('' when none) so the caller can say who took it.
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 'OK'
end
return holder or ''
