-- Fencing-token function shared by acquire.lua, release.lua, cancel.lua and fence.lua: LuaScript
-- puts this file in front of each of them (Redis 6.2 has no shared script libraries).
--
-- This runs for every fencing token issued, so it is written for the server's cost, measured in
-- instructions with callgrind (docs/benchmarks-analysis.md): each redis.call costs about as much as
-- the Lua around it, every function defined here is a closure built on every script call, and
-- formatting a number (string.format) costs more than a redis.call.

-- The next fencing token of the counter at key `counter`: max(counter + 1, server time in
-- microseconds), stored back with expiry `lifetime` ms. Server time keeps tokens increasing across
-- an evicted or expired counter, and across a failover to a replica whose counter lags; the counter
-- keeps them increasing should the server clock step back.
local function next_fence(counter, lifetime)
  local now = redis.call('TIME')
  -- Seconds and zero-padded microseconds, concatenated: the time in microseconds, as text.
  local micros = now[1] .. string.sub('00000' .. now[2], -6)
  -- Usually the clock is ahead of the counter: one write, which also returns the counter's value.
  local previous = redis.call('SET', counter, micros, 'PX', lifetime, 'GET')
  -- Equal-length digit strings compare as their numbers do, which spares converting both.
  if previous and (#previous ~= #micros or previous >= micros) then
    local last = tonumber(previous)
    if last and last % 1 == 0 and last >= tonumber(micros) then
      -- The clock is not ahead of the counter (it stepped back, or this is the same microsecond).
      last = last + 1
      redis.call('SET', counter, string.format('%d', last), 'PX', lifetime)
      return last
    end
    -- Otherwise the value was not one of our counters: server time replaces it.
  end
  return tonumber(micros)
end
