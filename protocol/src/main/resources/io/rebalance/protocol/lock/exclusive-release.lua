-- Give up the exclusive lease and/or the pending request of this owner; never another owner's.
-- KEYS[1] exclusive, KEYS[2] pending, ARGV[1] owner, ARGV[2] token ('' to withdraw a request only)
-- Returns the lease reply (LeaseReply): {1, owner, 0} when something of this owner was removed
--       | {0, the actual holder or requester or '', remaining_ms}
local removed = 0
local ex = redis.call('HMGET', KEYS[1], 'owner', 'token')
if ex[1] == ARGV[1] and ex[2] == ARGV[2] then
  redis.call('DEL', KEYS[1])
  removed = 1
end
if redis.call('HGET', KEYS[2], 'owner') == ARGV[1] then
  redis.call('DEL', KEYS[2])
  removed = 1
end
if removed == 1 then return {1, ARGV[1], 0} end
if ex[1] then return {0, ex[1] .. '#' .. ex[2], redis.call('PTTL', KEYS[1])} end
local pending = redis.call('HGET', KEYS[2], 'owner')
if pending then return {0, pending, redis.call('PTTL', KEYS[2])} end
return {0, '', -2}
