-- The ledger's side of fencing: write an account's fields only with a fencing token larger than the last one
-- written, so a holder that lost its lock (paused past its lease, say) and writes late changes nothing.
-- KEYS[1]  the account's hash
-- ARGV[1]  the writer's fencing token
-- ARGV[2..] field, value, field, value, ...
-- Returns 1 when written, 0 when refused.
-- Lua numbers are doubles: exact below 2^53, as ZooKeeper zxids and the Redis backends' microsecond tokens are.
local last = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if tonumber(ARGV[1]) <= last then
    return 0
end
redis.call('HSET', KEYS[1], 'fence', ARGV[1], unpack(ARGV, 2))
return 1
