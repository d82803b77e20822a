-- Releases the tail lease only if the caller holds it. KEYS[1] lease; ARGV[1] owner.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
