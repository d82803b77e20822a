-- Saves Debezium's offsets only while the caller still holds the tail lease: a tail that lost its lease (paused
-- past the TTL while a standby took over) must not move the offsets back under the new holder.
-- KEYS[1] lease, KEYS[2] offsets hash; ARGV[1] the lease member (owner#token), then field, value pairs
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.call('GET', KEYS[1]) or ''
end
for i = 2, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
return 'OK'
