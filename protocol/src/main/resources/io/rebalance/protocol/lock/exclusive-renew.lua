-- Extend the exclusive lease if this owner still holds it with this token.
-- KEYS[1] exclusive, ARGV[1] owner, ARGV[2] token, ARGV[3] TTL in ms
-- Returns 1, or the actual holder ('' when none) when the lease is gone
local ex = redis.call('HMGET', KEYS[1], 'owner', 'token')
if ex[1] ~= ARGV[1] or ex[2] ~= ARGV[2] then return ex[1] or '' end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
