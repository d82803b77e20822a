-- Ask for the exclusive lease, or take it once every shared holder is gone. The first call marks the request
-- pending (new shared leases wait from then on); the caller repeats it, which also keeps the request alive, until
-- it is granted or the caller gives up (exclusive-release clears the request).
-- KEYS[1] shared holders, KEYS[2] exclusive, KEYS[3] pending, KEYS[4] fencing token counter
-- ARGV[1] owner (names process and thread), ARGV[2] TTL in ms of the request and of the lease
-- Returns the lease reply (LeaseReply):
--         {1, owner#token, remaining_ms, expires_ms} granted (again, if this owner holds it already)
--       | {2, '', longest_remaining_ms, shared_holders} pending, waiting for shared holders to finish or expire
--       | {0, holder, remaining_ms, 'exclusive'|'pending'} another owner holds or asked first
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ex = redis.call('HMGET', KEYS[2], 'owner', 'token')
if ex[1] then
  local left = redis.call('PTTL', KEYS[2])
  if ex[1] == ARGV[1] then return {1, ex[1] .. '#' .. ex[2], left, now + left} end
  return {0, ex[1] .. '#' .. ex[2], left, 'exclusive'}
end
local pending = redis.call('HGET', KEYS[3], 'owner')
if pending and pending ~= ARGV[1] then return {0, pending, redis.call('PTTL', KEYS[3]), 'pending'} end
redis.call('HSET', KEYS[3], 'owner', ARGV[1], 'since_ms', redis.call('HGET', KEYS[3], 'since_ms') or now)
redis.call('PEXPIRE', KEYS[3], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local holders = redis.call('ZCARD', KEYS[1])
if holders > 0 then
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  return {2, '', tonumber(last[2]) - now, holders}
end
local token = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[2], 'owner', ARGV[1], 'token', token, 'since_ms', now)
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
return {1, ARGV[1] .. '#' .. token, tonumber(ARGV[2]), now + tonumber(ARGV[2])}
