-- Release: compare-and-delete, or compare-and-hand-over to the longest-waiting live waiter.
-- KEYS[1] lock key, KEYS[2] fencing counter, KEYS[3] wait queue, KEYS[4] waiter entries
-- (see acquire.lua); ARGV[1] our token, ARGV[2] the release channel, ARGV[3] counter lifetime in ms,
-- ARGV[4] (optional) the lock's sharded release channel: in a Redis Cluster 7+, a shard channel in the
-- lock's own slot, announced with SPUBLISH to that shard only instead of PUBLISH to every node.
-- Returns 1 if our lock was deleted or handed over, 0 if it was no longer ours (expired, and maybe
-- taken by another owner, which is left alone).
-- A hand-over sets the lock to the waiter's token with the waiter's lease and a fresh fencing
-- token, then publishes "<waiter id>:<fencing token>:<proof>": the waiter owns the lock before the
-- message arrives, so it needs no further round trip. Nobody waiting: nothing is published.
-- The message never carries the token itself, which is a capability (whoever knows it can release
-- the lock), and every subscriber reads the channel: the waiter id is SHA-1(token), and the proof
-- SHA-1(token .. ':' .. fencing token) shows the message came from a script that knew the token,
-- so no other publisher can forge a hand-over. A proven message may still be late; the waiter
-- believes it only if its token is above every counter value its own attempts have seen.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local millis
while true do
  local head = redis.call('ZPOPMIN', KEYS[3])
  if #head == 0 then
    break
  end
  local waiter = head[1]
  local entry = redis.call('HGET', KEYS[4], waiter)
  redis.call('HDEL', KEYS[4], waiter)
  if entry then
    if not millis then
      local now = redis.call('TIME')
      millis = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
    end
    local separator = string.find(entry, ':', 1, true)
    -- An entry past its alive-until time belongs to a waiter that gave up or died: skip it.
    if tonumber(string.sub(entry, 1, separator - 1)) > millis then
      local lease = string.sub(entry, separator + 1)
      redis.call('SET', KEYS[1], waiter, 'PX', lease)
      -- The fencing token exactly as acquire.lua makes it, the counter outliving the new lease.
      local fence = next_fence(KEYS[2], math.max(tonumber(ARGV[3]), tonumber(lease)))
      local text = string.format('%.0f', fence)
      local message = redis.sha1hex(waiter) .. ':' .. text .. ':' .. redis.sha1hex(waiter .. ':' .. text)
      -- The lock is already handed over: a node that cannot SPUBLISH (a Redis 6 node that joined the
      -- cluster later) must not fail the release, so it announces on the global channel instead.
      if not (ARGV[4] and type(redis.pcall('SPUBLISH', ARGV[4], message)) == 'number') then
        redis.call('PUBLISH', ARGV[2], message)
      end
      return 1
    end
  end
end
redis.call('DEL', KEYS[1])
return 1
