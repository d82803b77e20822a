-- Write a scope's whole routing entry as the fences say it stands, only while the caller holds the scope's exclusive
-- lease with this token (Redis had lost the entry, or holds one older than the fences: ADR 8).
-- KEYS[1] route (hash), KEYS[2] exclusive lease (hash); same hash tag
-- ARGV[1] owner, ARGV[2] token, ARGV[3] read target, ARGV[4] write target, ARGV[5] status, ARGV[6] epoch
-- Returns the lease reply (LeaseReply): {1, owner#token, remaining ms} | {0, holder#token or '', remaining ms}
local ex = redis.call('HMGET', KEYS[2], 'owner', 'token')
local left = redis.call('PTTL', KEYS[2])
if ex[1] ~= ARGV[1] or ex[2] ~= ARGV[2] then return {0, ex[1] and (ex[1] .. '#' .. ex[2]) or '', left} end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'read', ARGV[3], 'write', ARGV[4], 'status', ARGV[5], 'epoch', ARGV[6], 'token', ARGV[2],
  'updated_ms', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
return {1, ARGV[1] .. '#' .. ARGV[2], left}
