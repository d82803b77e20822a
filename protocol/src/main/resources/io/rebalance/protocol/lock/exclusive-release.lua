-- Give up the exclusive lease and/or the pending request of this owner; never another owner's.
-- KEYS[1] exclusive, KEYS[2] pending, ARGV[1] owner, ARGV[2] token ('' to withdraw a request only)
-- Returns 1 when something of this owner was removed, else the actual holder or requester ('' when none)
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
if removed == 1 then return 1 end
return ex[1] or redis.call('HGET', KEYS[2], 'owner') or ''
