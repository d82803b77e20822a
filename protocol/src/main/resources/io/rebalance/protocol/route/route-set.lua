-- Set a scope's routing entry, only while the caller holds the scope's exclusive lease with this token: a cutover
-- that paused past its lease cannot flip after writers have resumed.
-- KEYS[1] route (hash), KEYS[2] exclusive lease (hash); same hash tag
-- ARGV[1] owner, ARGV[2] token, ARGV[3] read target, ARGV[4] write target, ARGV[5] status, ARGV[6] expected status
-- ('' for any), ARGV[7] the least epoch the entry takes (the epoch the fences recorded for this flip, ADR 8)
-- Returns the lease reply (LeaseReply): {1, owner#token, remaining ms, epoch}
--       | {0, holder#token or '', remaining ms, 'lease'} the lease is another's or gone
--       | {0, owner#token, remaining ms, 'status:' .. actual status or ''} the entry is not in the expected status
local ex = redis.call('HMGET', KEYS[2], 'owner', 'token')
local left = redis.call('PTTL', KEYS[2])
if ex[1] ~= ARGV[1] or ex[2] ~= ARGV[2] then
  return {0, ex[1] and (ex[1] .. '#' .. ex[2]) or '', left, 'lease'}
end
local status = redis.call('HGET', KEYS[1], 'status')
if not status or (ARGV[6] ~= '' and status ~= ARGV[6]) then
  return {0, ARGV[1] .. '#' .. ARGV[2], left, 'status:' .. (status or '')}
end
local t = redis.call('TIME')
local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
if tonumber(ARGV[7]) > epoch then
  epoch = tonumber(ARGV[7])
  redis.call('HSET', KEYS[1], 'epoch', ARGV[7])
end
redis.call('HSET', KEYS[1], 'read', ARGV[3], 'write', ARGV[4], 'status', ARGV[5], 'token', ARGV[2],
  'updated_ms', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
return {1, ARGV[1] .. '#' .. ARGV[2], left, epoch}
