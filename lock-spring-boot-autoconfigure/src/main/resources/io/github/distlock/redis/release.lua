-- Release: compare-and-delete, so a lock that expired and was taken by another owner survives.
-- KEYS[1] lock key, KEYS[2] waiters marker; ARGV[1] our token, ARGV[2] release channel,
-- ARGV[3] the message (the lock's name).
-- Returns 1 if our lock was deleted, 0 otherwise. Publishes only when someone said it waits.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if redis.call('EXISTS', KEYS[2]) == 1 then
    redis.call('PUBLISH', ARGV[2], ARGV[3])
  end
  return 1
end
return 0
