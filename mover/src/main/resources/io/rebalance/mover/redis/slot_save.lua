-- Save a slot's progress, only if the caller still owns the lease. This is what stops a worker that paused past
-- its lease TTL: another worker owns the slot now, so the stale one's last_id is refused.
-- KEYS[1] lease, KEYS[2] state
-- ARGV[1] the lease member ('<owner>#<token>') of this acquisition, ARGV[2] last_id, ARGV[3] rows copied by this page, ARGV[4] lease TTL ms, ARGV[5] state TTL ms,
-- ARGV[6] status (IN_PROGRESS or FINISHED), ARGV[7] now in ms
-- Returns the lease reply (LeaseReply): {1, member, remaining ms (-2 once FINISHED gave the lease up)} saved
--       | {0, holder or '', remaining ms} refused
-- (the holder is '' when the lease expired and nobody took it)
local holder = redis.call('GET', KEYS[1])
if holder ~= ARGV[1] then
  return {0, holder or '', redis.call('PTTL', KEYS[1])}
end
redis.call('HSET', KEYS[2], 'last_id', ARGV[2], 'status', ARGV[6], 'owner', ARGV[1], 'updated_ms', ARGV[7])
redis.call('HDEL', KEYS[2], 'error')
redis.call('HINCRBY', KEYS[2], 'rows', ARGV[3])
if ARGV[6] == 'FINISHED' then
  -- A finished state never expires: only compaction, once the watermark covers it, deletes it (ADR 3). Were it to
  -- expire first, the slot would look never started and be copied again while the tail, which saw it finished,
  -- no longer records the keys that copy could overwrite (ADR 6).
  redis.call('PERSIST', KEYS[2])
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
return {1, ARGV[1], redis.call('PTTL', KEYS[1])}
