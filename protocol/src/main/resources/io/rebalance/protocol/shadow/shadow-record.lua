-- Counts shadow reads of a scope with one outcome, and keeps it when it was a mismatch; once a minute drops the minutes past the
-- retention.
-- KEYS[1] counts (hash), KEYS[2] mismatches (list); same hash tag
-- ARGV[1] outcome, ARGV[2] the caller's minute (Unix minutes), ARGV[3] the mismatch entry or '', ARGV[4] how many
-- mismatches are kept, ARGV[5] how many minutes of counts are kept, ARGV[6] how many reads had this outcome
redis.call('HINCRBY', KEYS[1], ARGV[2] .. ':' .. ARGV[1], tonumber(ARGV[6]))
redis.call('HINCRBY', KEYS[1], 'total:' .. ARGV[1], tonumber(ARGV[6]))
if ARGV[3] ~= '' then
  redis.call('LPUSH', KEYS[2], ARGV[3])
  redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[4]) - 1)
end
local minute = tonumber(ARGV[2])
local pruned = tonumber(redis.call('HGET', KEYS[1], 'pruned') or '0')
if minute > pruned then
  redis.call('HSET', KEYS[1], 'pruned', ARGV[2])
  local oldest = minute - tonumber(ARGV[5])
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    local m = tonumber(string.match(field, '^(%d+):'))
    if m and m <= oldest then redis.call('HDEL', KEYS[1], field) end
  end
end
return 1
