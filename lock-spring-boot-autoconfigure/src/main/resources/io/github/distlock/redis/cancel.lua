-- Leave the wait queue, for a waiter that stops waiting (timed out or interrupted).
-- KEYS[1] lock key, KEYS[2] fencing counter, KEYS[3] wait queue, KEYS[4] waiter entries
-- (see acquire.lua); ARGV[1] the waiter's token.
-- Returns the fencing token if a release handed the lock over to this waiter in the meantime (the
-- caller now owns it), otherwise 0.
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return handed_over_fence(KEYS[2])
end
return 0
