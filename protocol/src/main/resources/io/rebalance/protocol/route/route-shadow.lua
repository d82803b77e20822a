-- Sets one field of an existing routing entry (the shadow-read sample); an entry that does not exist is not made.
-- KEYS[1] the route; ARGV[1] the field, ARGV[2] its value. Returns 1 when set, 0 when there is no entry.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
