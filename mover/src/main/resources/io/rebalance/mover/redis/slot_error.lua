-- Record why a slot step failed, for `rebalance status`, only if the caller still owns the lease.
-- KEYS[1] lease, KEYS[2] state; ARGV[1] lease member, ARGV[2] message, ARGV[3] state TTL ms
-- Returns the lease reply (LeaseReply): {1, member, remaining ms} recorded | {0, holder or '', remaining ms} refused
local holder = redis.call('GET', KEYS[1])
if holder ~= ARGV[1] then
  return {0, holder or '', redis.call('PTTL', KEYS[1])}
end
redis.call('HSET', KEYS[2], 'error', ARGV[2])
if redis.call('HGET', KEYS[2], 'status') ~= 'FINISHED' then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return {1, ARGV[1], redis.call('PTTL', KEYS[1])}
