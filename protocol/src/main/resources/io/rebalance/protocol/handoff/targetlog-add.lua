-- An application's DynamoDB write under TARGET, before it is sent: adds its keys to the log of its epoch.
-- A log of another epoch, or none (Redis lost it), is marked with a gap; a log that would pass its cap is marked
-- overflowed and takes no more keys. Either way a rollback then compares every key, never only the logged ones.
-- KEYS[1] the set of keys, KEYS[2] the log's hash
-- ARGV[1] the write's route epoch, ARGV[2] the cap, ARGV[3..] the keys
local epoch = redis.call('HGET', KEYS[2], 'epoch')
if epoch ~= ARGV[1] then
  local found = epoch and ('the log of epoch ' .. epoch) or 'no log (Redis lost it)'
  redis.call('HSET', KEYS[2], 'gap', 'a write under epoch ' .. ARGV[1] .. ' found ' .. found)
  return 0
end
if #ARGV < 3 or redis.call('HEXISTS', KEYS[2], 'overflow') == 1 then return 0 end
if redis.call('SCARD', KEYS[1]) + #ARGV - 2 > tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[2], 'overflow', ARGV[2])
  return 0
end
redis.call('SADD', KEYS[1], unpack(ARGV, 3))
return 1
