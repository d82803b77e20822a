-- Redis server time in ms: lease expiries are in this clock, never in a client's.
local t = redis.call('TIME')
return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
