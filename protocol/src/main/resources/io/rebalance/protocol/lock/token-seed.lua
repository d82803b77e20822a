-- Raise the scope's token counter to at least ARGV[1]; never lower it (tokens only rise, ADR 8).
-- KEYS[1] token counter
-- Returns the counter's value after.
local now = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if now < floor then
  redis.call('SET', KEYS[1], ARGV[1])
  return floor
end
return now
