-- A Redlock node's renewal: renew.lua, and the node's clock (TIME) after the answers, as redlock_vote.lua
-- returns it, so that the holder sees a forward jump on a node in the reply of its renewal (NodeClock).
-- KEYS[i] lock key, ARGV[2i-1] its token, ARGV[2i] its lease in ms.
-- Returns an array: per key, 1 where the lease was extended, 0 where the key is gone or owned by another;
-- then the seconds and microseconds of TIME.
-- A released key is never recreated: PEXPIRE only touches a key that still holds our token.
local now = redis.call('TIME')
local result = {}
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[2 * i - 1] then
    result[i] = redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
  else
    result[i] = 0
  end
end
result[#KEYS + 1] = tonumber(now[1])
result[#KEYS + 2] = tonumber(now[2])
return result
