-- Raise the fencing counter of a lock to at least a given token, but only while the lock still
-- holds the caller's token. A backend over several stores (Redlock) draws a token on each store
-- that granted it, takes the largest, and writes that back to a majority with this script before
-- the token counts as issued: any later holder's majority shares a store with that majority, and
-- draws there a token above it.
-- KEYS[1] lock key, KEYS[2] fencing counter; ARGV[1] the holder's token, ARGV[2] the token to
-- raise the counter to, ARGV[3] counter lifetime in ms.
-- Returns 1 if the counter is now at least ARGV[2], 0 if the lock no longer holds ARGV[1].
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local current = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if current < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
return 1
