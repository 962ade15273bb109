-- Acquire: SET NX PX plus a fencing token, atomically; a caller that will wait joins the queue.
-- KEYS[1] lock key         <prefix>{<key>}
-- KEYS[2] fencing counter  <prefix>{<key>}:fence   (the braces put all four keys in one slot)
-- KEYS[3] wait queue       <prefix>{<key>}:queue   sorted set: waiter token -> arrival (server µs)
-- KEYS[4] waiter entries   <prefix>{<key>}:waiting hash: waiter token -> "<alive until ms>:<lease ms>"
-- ARGV[1] token (128 random bits), ARGV[2] lease in ms, ARGV[3] counter lifetime in ms,
-- ARGV[4] how long the entry stays alive if not refreshed, in ms (0: the caller will not wait),
-- ARGV[5] '1' if this caller may already be queued (it waited before)
-- Returns the fencing token (> 0) when acquired (or handed over by a release), otherwise -PTTL of
-- the holder (0 if it has no TTL).
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[5] == '1' then
    redis.call('ZREM', KEYS[3], ARGV[1])
    redis.call('HDEL', KEYS[4], ARGV[1])
  end
  return next_fence(KEYS[2], ARGV[3])
end
if ARGV[5] == '1' and redis.call('GET', KEYS[1]) == ARGV[1] then
  -- A release handed the lock to us (release.lua) and its message has not reached us yet.
  return handed_over_fence(KEYS[2])
end
local alive = tonumber(ARGV[4])
if alive > 0 then
  local now = redis.call('TIME')
  local millis = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  -- NX: a waiter that refreshes its entry keeps its place in the queue.
  redis.call('ZADD', KEYS[3], 'NX', now[1] .. string.format('%06d', tonumber(now[2])), ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[1], string.format('%.0f', millis + alive) .. ':' .. ARGV[2])
  -- Entries of waiters that vanished are skipped by the release; the keys go once nobody refreshes.
  -- Only ever extend: a short wait must not cut the entries of longer waits.
  for i = 3, 4 do
    if redis.call('PTTL', KEYS[i]) < alive then
      redis.call('PEXPIRE', KEYS[i], alive)
    end
  end
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then return 0 end
return -pttl
