-- Write a scope's whole routing entry as the fences say it stands, only while the caller holds the scope's exclusive
-- lease with this token (Redis had lost the entry, or holds one older than the fences: ADR 8).
-- KEYS[1] route (hash), KEYS[2] exclusive lease (hash); same hash tag
-- ARGV[1] owner, ARGV[2] token, ARGV[3] read target, ARGV[4] write target, ARGV[5] status, ARGV[6] epoch
-- Returns {1} | {0, actual holder or ''}
local ex = redis.call('HMGET', KEYS[2], 'owner', 'token')
if ex[1] ~= ARGV[1] or ex[2] ~= ARGV[2] then return {0, ex[1] or ''} end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'read', ARGV[3], 'write', ARGV[4], 'status', ARGV[5], 'epoch', ARGV[6], 'token', ARGV[2],
  'updated_ms', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
return {1}
