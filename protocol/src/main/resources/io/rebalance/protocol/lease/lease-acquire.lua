-- Take a single-holder lease if it is free; extend it if this owner holds it already (a keeper candidate asking again).
-- A lease is the string '<owner>#<token>' with a TTL. The token comes from a counter that no lease script ever
-- lowers or deletes, so every grant is distinct and a later grant has a larger token than any before it.
-- (Compaction deletes a finished slot's counter with its state; such a slot is given back by any later grantee.)
-- KEYS[1] lease, KEYS[2] token counter (same hash tag as the lease); ARGV[1] owner, ARGV[2] TTL ms
-- Returns {1, member, pttl} held by the caller | {0, holder member, pttl} held by another
local cur = redis.call('GET', KEYS[1])
if cur then
  if string.sub(cur, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. '#' then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, cur, tonumber(ARGV[2])}
  end
  return {0, cur, redis.call('PTTL', KEYS[1])}
end
local member = ARGV[1] .. '#' .. redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], member, 'PX', ARGV[2])
return {1, member, tonumber(ARGV[2])}
