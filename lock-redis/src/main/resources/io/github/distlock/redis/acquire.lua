-- Acquire: SET NX PX, with a fencing token if asked; a caller that will wait joins the queue.
-- KEYS[1] lock key         <prefix>{<key>}
-- KEYS[2] fencing counter  <prefix>{<key>}:fence   (the braces put all four keys in one slot)
-- KEYS[3] wait queue       <prefix>{<key>}:queue   sorted set: waiter token -> arrival (server µs)
-- KEYS[4] waiter entries   <prefix>{<key>}:waiting hash: waiter token -> "<alive until ms>:<lease ms>"
-- ARGV[1] token (128 random bits), ARGV[2] lease in ms, ARGV[3] counter lifetime in ms,
-- ARGV[4] how long the entry stays alive if not refreshed, in ms (0: the caller will not wait),
-- ARGV[5] '1' if this caller may already be queued (it waited before),
-- ARGV[6] '1' to draw a fencing token with the lock
-- Returns {1, fencing token or 0, remaining lease in ms} when the lock holds our token, otherwise
-- {0, PTTL of the holder (0 if it has none), the fencing counter (or server time if it has none)}.
--
-- Idempotent for its own token: a lock that already holds ARGV[1] is ours, whether a release
-- handed it over (release.lua) or this very script already ran once and its reply was lost (the
-- client re-sends commands after a reconnect). Either way the token is drawn afresh, never taken
-- from an earlier holder, and the lease left is read from Redis, not assumed.
local lease
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  lease = tonumber(ARGV[2])
elseif redis.call('GET', KEYS[1]) == ARGV[1] then
  lease = redis.call('PTTL', KEYS[1])
end
if lease then
  if ARGV[5] == '1' then
    redis.call('ZREM', KEYS[3], ARGV[1])
    redis.call('HDEL', KEYS[4], ARGV[1])
  end
  if ARGV[6] == '1' then
    return {1, next_fence(KEYS[2], ARGV[3]), lease}
  end
  return {1, 0, lease}
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
if pttl < 0 then pttl = 0 end
-- The counter as of now: a hand-over message whose token is not above it is older than this
-- attempt and must not be believed (DefaultLockService).
local counter = tonumber(redis.call('GET', KEYS[2]))
if not counter then
  local now = redis.call('TIME')
  counter = tonumber(now[1]) * 1000000 + tonumber(now[2])
end
return {0, pttl, counter}
