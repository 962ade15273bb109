-- A Redlock node's vote, sent only by digest as this client's incarnation script (NodeIncarnation): the
-- SET NX PX a single Redis gets, in a script so that a node that does not know the script cannot vote.
-- KEYS[1] lock key; ARGV[1] our token, ARGV[2] lease ms.
-- Returns {granted, seconds, microseconds}: granted is 1 if the lock is ours (set now, or already ours: the
-- vote was re-sent after a reconnect and its first delivery set it), 0 if another owner holds it; then the
-- node's clock (TIME), the clock it expires keys by, so that the client sees a forward jump, which may
-- have expired leases early, in the very reply of the vote (NodeClock).
local now = redis.call('TIME')
local clock = {tonumber(now[1]), tonumber(now[2])}
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  return {1, clock[1], clock[2]}
end
if current then
  return {0, clock[1], clock[2]}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {1, clock[1], clock[2]}
