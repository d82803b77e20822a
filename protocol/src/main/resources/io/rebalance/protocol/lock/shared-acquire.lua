-- Take a shared lease unless an exclusive lease is held or requested (writer-preferring: a pending exclusive
-- request stops new shared leases, so a steady stream of writers cannot starve the cutover).
-- KEYS[1] shared holders (zset member -> expiry ms), KEYS[2] exclusive (hash), KEYS[3] pending exclusive (hash),
-- KEYS[4] fencing token counter; all under one hash tag, so this works on Redis Cluster
-- ARGV[1] holder (names process and thread), ARGV[2] TTL in ms
-- Returns the lease reply (LeaseReply): {1, member, ttl_ms, expires_ms} | {0, owner, remaining_ms, 'exclusive'|'pending'}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ex = redis.call('HMGET', KEYS[2], 'owner', 'token')
if ex[1] then return {0, ex[1] .. '#' .. ex[2], redis.call('PTTL', KEYS[2]), 'exclusive'} end
local pending = redis.call('HGET', KEYS[3], 'owner')
if pending then return {0, pending, redis.call('PTTL', KEYS[3]), 'pending'} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local token = redis.call('INCR', KEYS[4])
local member = ARGV[1] .. '#' .. token
local expires = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], expires, member)
-- the set itself goes when its last holder would have
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, member, tonumber(ARGV[2]), expires}
