-- Drops keys of bypassing writes that were reconciled, each only if no later bypassing change of it was recorded
-- since it was read (its position is still the one read). KEYS[1]: the hash; ARGV: key, position pairs.
-- Returns how many were dropped.
local dropped = 0
for i = 1, #ARGV, 2 do
    if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
        redis.call('HDEL', KEYS[1], ARGV[i])
        dropped = dropped + 1
    end
end
return dropped
