-- Redlock's acquire on its arbiter node, for a lock found taken before: SET NX, and if it is taken,
-- the asking application instance joins the key's wake-up line on this node.
-- KEYS[1] lock key, KEYS[2] the line (a sorted set: waiter id by arrival, ms), KEYS[3] each waiter's
-- alive-until (a hash: waiter id to ms); ARGV[1] our token, ARGV[2] lease ms, ARGV[3] the waiter id
-- (one per application instance, whose subscriptions listen on "<hint channel>:<waiter id>"),
-- ARGV[4] how long the entry stays alive without another attempt, ms.
-- Returns {granted, seconds, microseconds}: granted is 1 if the lock is ours now (set, or already ours), 0 if
-- it is taken; then the node's clock (TIME), as redlock_vote.lua returns it.
-- The line is only a liveness device: the release on this node announces itself to the instance at
-- its head instead of to every instance (redlock_release.lua), so one waiter wakes per release
-- instead of one per instance. It grants nothing: a woken waiter still needs a majority, and
-- anyone may take a free lock before it. An instance that stops asking drops out by its alive-until.
local now = redis.call('TIME')
local seconds, micros = tonumber(now[1]), tonumber(now[2])
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  return {1, seconds, micros}
end
if not current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('ZREM', KEYS[2], ARGV[3])
  redis.call('HDEL', KEYS[3], ARGV[3])
  return {1, seconds, micros}
end
local millis = seconds * 1000 + math.floor(micros / 1000)
local alive = tonumber(ARGV[4])
-- NX: a waiter keeps its place in the line while it goes on asking.
redis.call('ZADD', KEYS[2], 'NX', millis, ARGV[3])
redis.call('HSET', KEYS[3], ARGV[3], millis + alive)
redis.call('PEXPIRE', KEYS[2], alive)
redis.call('PEXPIRE', KEYS[3], alive)
return {0, seconds, micros}
