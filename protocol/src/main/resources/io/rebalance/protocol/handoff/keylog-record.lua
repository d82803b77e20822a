-- The forward tail, inside its apply lock, before it writes: adds the keys it is about to write to the key log's
-- current generation and says which generation it logged under (KeyLog, ADR 7).
-- KEYS[1] the generation key, KEYS[2] the seen key
-- ARGV[1] the prefix of the generations' sets (the set is named by the generation this script reads, so it cannot be
--         in KEYS; it carries the same {cdc} hash tag, so on a Redis Cluster it lives in the same slot)
-- ARGV[2] the generation the tail expects ('*' any, '' none: not logging): it logged its writes still landing under
--         it, so a newer generation must not be noted as seen before they landed
-- ARGV[3..] the keys about to be written
-- Returns the generation, false when no cutover is logging, or -1 (nothing recorded) when it is not the one expected.
local gen = redis.call('GET', KEYS[1])
if ARGV[2] ~= '*' and ARGV[2] ~= (gen or '') then return -1 end
if not gen then return false end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 1 then ttl = 60000 end
if #ARGV > 2 then
  local set = ARGV[1] .. gen
  for i = 3, #ARGV do redis.call('SADD', set, ARGV[i]) end
  redis.call('PEXPIRE', set, ttl)
end
redis.call('SET', KEYS[2], gen, 'PX', ttl)
return gen
