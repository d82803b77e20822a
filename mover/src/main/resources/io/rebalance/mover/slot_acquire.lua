-- Take a slot's worker lease unless the slot is finished or another worker holds it.
-- KEYS[1] the slot's lease, KEYS[2] the slot's state (same hash tag, so this works on Redis Cluster)
-- ARGV[1] owner token (unique per acquisition), ARGV[2] lease TTL in ms
-- Returns {'FINISHED'} | {'LEASED', holder, pttl} | {'ACQUIRED', last_id, rows}
local status = redis.call('HGET', KEYS[2], 'status')
if status == 'FINISHED' then
  return {'FINISHED'}
end
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then
  return {'LEASED', holder, tostring(redis.call('PTTL', KEYS[1]))}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local last = redis.call('HGET', KEYS[2], 'last_id') or ''
local rows = redis.call('HGET', KEYS[2], 'rows') or '0'
return {'ACQUIRED', last, rows}
