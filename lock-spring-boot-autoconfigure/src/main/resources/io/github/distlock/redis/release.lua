-- Release: compare-and-delete, so a lock that expired and was taken by another owner survives.
-- KEYS[1] lock key, ARGV[1] our token. Returns 1 if our lock was deleted, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
