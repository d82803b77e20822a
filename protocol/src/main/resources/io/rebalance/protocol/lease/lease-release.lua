-- Give a lease up, only if the caller holds it (a late release must not free someone else's lease).
-- KEYS[1] lease; ARGV[1] member. Returns {1, member, 0} released | {0, holder member or '', pttl} not the caller's
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return {1, cur, 0}
end
return {0, cur or '', redis.call('PTTL', KEYS[1])}
