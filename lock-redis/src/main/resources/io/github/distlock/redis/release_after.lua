-- Release after a minimum hold: compare-and-shorten, the release of a lock whose minimum hold has not
-- passed yet (LockRequest.withMinHold).
-- KEYS[1] lock key; ARGV[1] our token, ARGV[2] how long the lock may stay held from now, in ms (> 0).
-- Returns 1 if the lock held our token (its lease is now at most ARGV[2]), 0 if it was no longer ours
-- (expired, and maybe taken by another owner, which is left alone).
-- The lease is only ever shortened, never lengthened: a lock with less left keeps what it has. The
-- key keeps our token until it expires, so the wait queue is left as it is: no waiter is handed the
-- lock before the minimum hold ends, and waiters, which never sleep past the holder's PTTL, take it
-- with their next attempt once it has expired (Redis runs no script on an expiry, so nobody is handed
-- it then). Sent twice, it leaves the same lease: the second call finds less left than it asks for.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local pttl = redis.call('PTTL', KEYS[1])
local remaining = tonumber(ARGV[2])
-- -1: a lease without expiry (never set by us, but never left endless either).
if pttl < 0 or pttl > remaining then
  redis.call('PEXPIRE', KEYS[1], remaining)
end
return 1
