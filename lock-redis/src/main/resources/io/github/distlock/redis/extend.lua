-- Extend: compare-and-PEXPIRE of one lock, which sets its remaining lease to ARGV[2] ms from now,
-- longer or shorter than it was (LockHandle.extend).
-- KEYS[1] lock key; ARGV[1] our token, ARGV[2] the new lease in ms.
-- Returns 1 if the lease was set, 0 if the lock no longer holds our token (left alone).
-- A released or expired key is never recreated: PEXPIRE only touches a key that still holds our token.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
