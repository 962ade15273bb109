-- Leave the wait queue, for a waiter that stops waiting (timed out or interrupted).
-- KEYS[1] lock key, KEYS[2] fencing counter, KEYS[3] wait queue, KEYS[4] waiter entries
-- (see acquire.lua); ARGV[1] the waiter's token, ARGV[2] counter lifetime in ms.
-- Returns {1, fencing token, remaining lease in ms} if a release handed the lock over to this
-- waiter in the meantime (the caller now owns it), otherwise {0}. Idempotent: running it twice
-- leaves the same state, and a handed-over lock gets a freshly drawn token each time.
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return {1, next_fence(KEYS[2], ARGV[2]), redis.call('PTTL', KEYS[1])}
end
return {0}
