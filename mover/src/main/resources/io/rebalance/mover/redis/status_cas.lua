-- Change the run status only from an expected one (an absent key counts as NOT_STARTED).
-- KEYS[1] status; ARGV[1] expected, ARGV[2] new. Returns the status after the call.
local current = redis.call('GET', KEYS[1]) or 'NOT_STARTED'
if current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return ARGV[2]
end
return current
