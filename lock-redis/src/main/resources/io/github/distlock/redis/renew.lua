-- Renew many leases in one round trip: compare-and-PEXPIRE for each key.
-- KEYS[i] lock key, ARGV[2i-1] its token, ARGV[2i] its lease in ms.
-- Returns an array: 1 where the lease was extended, 0 where the key is gone or owned by another.
-- A released key is never recreated: PEXPIRE only touches a key that still holds our token.
local result = {}
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[2 * i - 1] then
    result[i] = redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
  else
    result[i] = 0
  end
end
return result
