-- Records writes that bypassed the Postgres fence: each key with the WAL position of its change, under a cap.
-- KEYS[1]: the hash of keys; KEYS[2]: the counter of changes past the cap. ARGV[1]: the cap; then key, position pairs.
-- Returns how many changes were counted past the cap.
local cap = tonumber(ARGV[1])
local over = 0
for i = 2, #ARGV, 2 do
    if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 or redis.call('HLEN', KEYS[1]) < cap then
        redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    else
        over = over + 1
    end
end
if over > 0 then redis.call('INCRBY', KEYS[2], over) end
return over
