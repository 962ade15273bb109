-- Acquire: SET NX PX plus a fencing token, atomically.
-- KEYS[1] lock key  <prefix>{<key>}
-- KEYS[2] fencing counter  <prefix>{<key>}:fence    (the braces put all three keys in one slot)
-- KEYS[3] waiters marker   <prefix>{<key>}:waiters
-- ARGV[1] token (128 random bits), ARGV[2] lease in ms, ARGV[3] counter lifetime in ms,
-- ARGV[4] how long the caller will wait in ms (0: it will not wait)
-- Returns the fencing token (> 0) when acquired, otherwise -PTTL of the holder (0 if it has no TTL).
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  -- Tell the holder's release that someone waits, so it publishes; uncontended releases don't.
  local wait = tonumber(ARGV[4])
  if wait > 0 and redis.call('PTTL', KEYS[3]) < wait then
    redis.call('SET', KEYS[3], '1', 'PX', wait)
  end
  local pttl = redis.call('PTTL', KEYS[1])
  if pttl < 0 then return 0 end
  return -pttl
end
-- token = max(counter + 1, server time in microseconds): INCR keeps it strictly increasing while
-- the counter lives; TIME keeps it increasing across an evicted or expired counter.
local fence = redis.call('INCR', KEYS[2])
local now = redis.call('TIME')
local micros = tonumber(now[1]) * 1000000 + tonumber(now[2])
if fence < micros then
  fence = micros
  redis.call('SET', KEYS[2], string.format('%.0f', micros), 'PX', ARGV[3])
else
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return fence
