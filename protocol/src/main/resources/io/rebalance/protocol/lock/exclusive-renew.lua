-- Extend the exclusive lease if this owner still holds it with this token.
-- KEYS[1] exclusive, ARGV[1] owner, ARGV[2] token, ARGV[3] TTL in ms
-- Returns the lease reply (LeaseReply): {1, owner#token, ttl_ms} | {0, holder#token or '', remaining_ms}
local ex = redis.call('HMGET', KEYS[1], 'owner', 'token')
if ex[1] ~= ARGV[1] or ex[2] ~= ARGV[2] then
  if not ex[1] then return {0, '', -2} end
  return {0, ex[1] .. '#' .. ex[2], redis.call('PTTL', KEYS[1])}
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, ARGV[1] .. '#' .. ARGV[2], tonumber(ARGV[3])}
