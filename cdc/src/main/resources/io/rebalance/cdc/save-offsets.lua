-- Saves Debezium's offsets only while the caller still holds the tail lease: a tail that lost its lease (paused
-- past the TTL while a standby took over) must not move the offsets back under the new holder.
-- KEYS[1] lease, KEYS[2] offsets hash (both under the tail's hash tag); ARGV[1] the lease member (owner#token),
-- then field, value pairs
-- Returns the lease reply (LeaseReply): {1, member, remaining ms} saved | {0, holder or '', remaining ms} refused
local holder = redis.call('GET', KEYS[1])
if holder ~= ARGV[1] then
  return {0, holder or '', redis.call('PTTL', KEYS[1])}
end
for i = 2, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
return {1, ARGV[1], redis.call('PTTL', KEYS[1])}
