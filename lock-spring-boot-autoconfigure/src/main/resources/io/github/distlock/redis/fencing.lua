-- Fencing-token functions shared by acquire.lua, release.lua and cancel.lua: LuaScript puts this
-- file in front of each of them (Redis 6.2 has no shared script libraries).

-- The next fencing token of the counter at key `counter`: max(counter + 1, server time in
-- microseconds), stored back with the given lifetime. INCR keeps tokens strictly increasing while
-- the counter lives; TIME keeps them increasing across an evicted or expired counter.
local function next_fence(counter, lifetime)
  local fence = redis.call('INCR', counter)
  local now = redis.call('TIME')
  local micros = tonumber(now[1]) * 1000000 + tonumber(now[2])
  if fence < micros then
    fence = micros
    redis.call('SET', counter, string.format('%.0f', micros), 'PX', lifetime)
  else
    redis.call('PEXPIRE', counter, lifetime)
  end
  return fence
end

-- The fencing token a release handed over with the lock: the counter's value, as nothing has
-- acquired since. Should the counter be gone, server time is larger than any token issued.
local function handed_over_fence(counter)
  local fence = redis.call('GET', counter)
  if fence then return tonumber(fence) end
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000000 + tonumber(now[2])
end

