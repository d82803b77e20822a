-- Take a shared lease unless an exclusive lease is held or requested (writer-preferring: a pending exclusive
-- request stops new shared leases, so a steady stream of writers cannot starve the cutover).
-- KEYS[1] shared holders (zset member -> expiry ms), KEYS[2] exclusive (hash), KEYS[3] pending exclusive (hash),
-- KEYS[4] fencing token counter; all under one hash tag, so this works on Redis Cluster
-- ARGV[1] holder (names process and thread), ARGV[2] TTL in ms
-- Returns {1, member, token, expires_ms} | {0, 'exclusive'|'pending', owner, remaining_ms}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ex = redis.call('HGET', KEYS[2], 'owner')
if ex then return {0, 'exclusive', ex, redis.call('PTTL', KEYS[2])} end
local pending = redis.call('HGET', KEYS[3], 'owner')
if pending then return {0, 'pending', pending, redis.call('PTTL', KEYS[3])} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local token = redis.call('INCR', KEYS[4])
local member = ARGV[1] .. '#' .. token
local expires = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], expires, member)
-- the set itself goes when its last holder would have
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, member, token, expires}
