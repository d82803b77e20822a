-- Extend a lease the caller holds. KEYS[1] lease; ARGV[1] member ('<owner>#<token>'), ARGV[2] TTL ms
-- Returns {1, member, pttl} extended | {0, holder member or '', pttl} the caller no longer holds it
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, cur, tonumber(ARGV[2])}
end
return {0, cur or '', redis.call('PTTL', KEYS[1])}
