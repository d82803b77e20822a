-- Record why a slot step failed, for `rebalance status`, only if the caller still owns the lease.
-- KEYS[1] lease, KEYS[2] state; ARGV[1] lease member, ARGV[2] message, ARGV[3] state TTL ms
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[2], 'error', ARGV[2])
if redis.call('HGET', KEYS[2], 'status') ~= 'FINISHED' then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return 1
