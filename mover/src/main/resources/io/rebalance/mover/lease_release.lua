-- Release a lease only if the caller owns it (a late release must not free someone else's lease).
-- KEYS[1] lease; ARGV[1] owner. Returns 1 when released, 0 otherwise
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
