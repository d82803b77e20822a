-- The run's write-unit budget, one hash shared by every copy process (WriteUnitBudget says why it is shaped so).
-- KEYS[1] the budget's hash. ARGV[1] the operation:
--   take UNITS            reserve UNITS: returns {microseconds to wait before sending, units/s allowed now}
--   report C D T          C units consumed, D = consumed - reserved (the schedule's correction), T = 1 if throttled
--   ceiling N IFABSENT    set the ceiling (units/s, 0 = no budget); IFABSENT = 1 leaves one already set
--   read                  nothing changes
-- The rate allowed grows back after a cut fast up to what the table took then, slowly above it (probing for more).
-- report, ceiling and read return {ceiling, allowed, consumed units/s, throttles, cuts, ramp cap, consumed total}.
-- Times are the server's (TIME), in microseconds, so every process shares one clock.
local INCREASE = 0.02 -- additive increase: this share of the ceiling per second, up to what the table last took
local PROBE = 0.25    -- above what the table took when throttling last cut the rate: a quarter of that increase
local BETA = 0.85     -- multiplicative decrease on throttling
local COOL = 2000000  -- at most one decrease per 2 s, however many processes saw the same throttling
local TAU = 5000000   -- the consumed rate is an average over about 5 s

-- numbers as text with every digit (a bare number would be written with 14: times in microseconds need 16)
local function n(x) return string.format('%.17g', x) end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local key = KEYS[1]
local op = ARGV[1]
local f = redis.call('HMGET', key, 'ceiling', 'allowed', 'since', 'tat', 'ramp_cap', 'sum', 'sum_at', 'last_cut',
  'throttles', 'cuts', 'consumed', 'sum_from', 'took')
local ceiling = tonumber(f[1]) or 0
local ramp = tonumber(f[5]) or 0

local fresh = false -- a budget set where there was none starts at its cap, not at what was left of an old one
if op == 'ceiling' then
  if ARGV[3] == '1' and f[1] then return {} end
  fresh = ceiling <= 0
  ceiling = tonumber(ARGV[2])
  redis.call('HSET', key, 'ceiling', n(ceiling))
end

-- the rate allowed now: the last one, raised by the additive increase since, within the ceiling and the ramp's cap
local cap = ceiling
if ramp > 0 and ramp < cap then cap = ramp end
local floor = math.min(cap, math.max(10, ceiling * 0.01))
local since = tonumber(f[3]) or now
local allowed = tonumber(f[2]) or cap
if fresh then allowed = cap end
local took = tonumber(f[13]) or 0
local fast = ceiling * INCREASE
local dt = (now - since) / 1000000
if fast <= 0 then
  allowed = cap -- no budget (a ceiling of 0): nothing to grow
elseif took <= 0 or (allowed < took and dt <= (took - allowed) / fast) then
  allowed = allowed + fast * dt
else
  local probing = dt - math.max(0, (took - allowed) / fast)
  allowed = math.max(allowed, took) + fast * PROBE * probing
end
allowed = math.max(floor, math.min(cap, allowed))

if op == 'take' then
  if ceiling <= 0 then return {'0', '0'} end
  local tat = math.max(tonumber(f[4]) or now, now)
  local wait = tat - now
  tat = tat + tonumber(ARGV[2]) / allowed * 1000000
  redis.call('HSET', key, 'allowed', n(allowed), 'since', n(now), 'tat', n(tat))
  return {n(wait), n(allowed)}
end

local sum = tonumber(f[6]) or 0
local sumAt = tonumber(f[7]) or now
local sumFrom = tonumber(f[12]) or now
sum = sum * math.exp(-(now - sumAt) / TAU)
-- the consumed rate: the decayed sum over the time it covers (less than TAU in the first seconds of a run; the first
-- report covers the second before it)
local function rate()
  local covers = (TAU / 1000000) * (1 - math.exp(-(now - sumFrom + 1000000) / TAU))
  return sum / covers
end
local throttles = tonumber(f[9]) or 0
local cuts = tonumber(f[10]) or 0
local consumed = tonumber(f[11]) or 0

if op == 'report' then
  local c = tonumber(ARGV[2])
  sum = sum + c
  consumed = consumed + c
  redis.call('HSET', key, 'sum', n(sum), 'sum_at', n(now), 'consumed', n(consumed))
  if not f[12] and c > 0 then redis.call('HSET', key, 'sum_from', n(now)) end
  if ceiling > 0 and f[4] then
    redis.call('HSET', key, 'tat', n(tonumber(f[4]) + tonumber(ARGV[3]) / allowed * 1000000))
  end
  if ARGV[4] == '1' then
    throttles = throttles + 1
    redis.call('HSET', key, 'throttles', n(throttles))
    if ceiling > 0 and now - (tonumber(f[8]) or 0) >= COOL then
      -- down by BETA, and at once below what the table took (the consumed rate) when that is lower still: a
      -- budget far above the table's capacity comes down in one step, not in many
      -- what the table took is known once consumption has been reported for TAU: before, the average is low
      local known = sum > 0 and f[12] and now - sumFrom >= TAU
      local r = known and rate() or 0
      if known and r * 0.95 < allowed * BETA then allowed = r * 0.95 else allowed = allowed * BETA end
      allowed = math.max(floor, allowed)
      if known then redis.call('HSET', key, 'took', n(r)) end
      cuts = cuts + 1
      redis.call('HSET', key, 'allowed', n(allowed), 'since', n(now), 'last_cut', n(now), 'cuts', n(cuts))
    end
  end
elseif op == 'ceiling' then
  redis.call('HSET', key, 'allowed', n(allowed), 'since', n(now))
end
return {n(ceiling), n(ceiling > 0 and allowed or 0), n(sum > 0 and rate() or 0), n(throttles), n(cuts), n(ramp),
  n(consumed)}
