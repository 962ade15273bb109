-- Fencing-token functions shared by acquire.lua, release.lua and cancel.lua: LuaScript puts this
-- file in front of each of them (Redis 6.2 has no shared script libraries).

-- Server time in microseconds (exact: below 2^53 until the year 2255).
local function server_micros()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000000 + tonumber(now[2])
end

-- The next fencing token of the counter at key `counter`: max(counter + 1, server time in
-- microseconds). Server time keeps tokens increasing across an evicted or expired counter, and
-- across a failover to a replica whose counter lags; the counter keeps them increasing should the
-- server clock step back.
-- This runs on every acquisition, so it is written for cost (each redis.call is ~0.3-0.8 µs of
-- the server's single thread): INCRBY updates the stored integer in place and keeps its TTL, where
-- SET ... PX would build a new value and a new expiry each time. The TTL (`lifetime` ms) is
-- refreshed when the token enters a new hour, so the counter outlives the last acquisition by at
-- least `lifetime` minus one hour.
local HOUR_MICROS = 3600000000
local function next_fence(counter, lifetime)
  local micros = server_micros()
  local previous = tonumber(redis.call('GET', counter) or '')
  if not previous or previous % 1 ~= 0 then
    -- No counter yet (or not one of ours): start it at server time.
    redis.call('SET', counter, string.format('%.0f', micros), 'PX', lifetime)
    return micros
  end
  local fence = micros
  if previous >= micros then
    fence = previous + 1
  end
  redis.call('INCRBY', counter, string.format('%.0f', fence - previous))
  if math.floor(previous / HOUR_MICROS) ~= math.floor(fence / HOUR_MICROS) then
    redis.call('PEXPIRE', counter, lifetime)
  end
  return fence
end

-- The fencing token a release handed over with the lock: the counter's value, as nothing has
-- acquired since. Should the counter be gone, server time is larger than any token issued.
local function handed_over_fence(counter)
  local fence = redis.call('GET', counter)
  if fence then return tonumber(fence) end
  return server_micros()
end

