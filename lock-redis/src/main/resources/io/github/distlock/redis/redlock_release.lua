-- Redlock's release on one of its nodes: compare-and-delete, then the release hint.
-- KEYS[1] lock key; ARGV[1] our token; ARGV[2] the hint channel and ARGV[3] the hint,
-- "<release id>:<lock key>" (the same on every node, so that a waiter wakes once per release), both
-- left out on a node that does not announce this release.
-- On the arbiter node, also KEYS[2] and KEYS[3], the key's wake-up line (see redlock_acquire.lua):
-- the hint goes to the instance at the head of the line that is alive and still listens
-- ("<hint channel>:<waiter id>"), and to every instance ("<hint channel>") only if there is none.
-- Returns 1 if our lock was deleted, 0 if it was no longer ours (left alone, and nothing announced).
-- A Redlock keeps no hand-over queue on its nodes, so there is nothing to hand over (see release.lua
-- for a single Redis). The hint leaves with the delete itself: no command of its own per node, and
-- waiters hear of the release before the releaser has even counted its majority. pcall: a user
-- whose ACL does not allow the channel still releases; waiters then find the lock by polling.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
if not ARGV[2] then
  return 1
end
if KEYS[2] then
  -- pcall throughout: the lock is deleted already, and a user whose ACL lacks a command of the line
  -- must still get its answer; the hint then goes to everyone.
  local millis
  while true do
    local head = redis.pcall('ZPOPMIN', KEYS[2])
    if type(head) ~= 'table' or head.err or #head == 0 then
      break
    end
    if not millis then
      local now = redis.pcall('TIME')
      if type(now) ~= 'table' or now.err then
        break
      end
      millis = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
    end
    local aliveUntil = redis.pcall('HGET', KEYS[3], head[1])
    redis.pcall('HDEL', KEYS[3], head[1])
    -- PUBLISH counts the subscribers that got it: none means that instance is gone.
    if type(aliveUntil) == 'string' and tonumber(aliveUntil) > millis then
      local heard = redis.pcall('PUBLISH', ARGV[2] .. ':' .. head[1], ARGV[3])
      if type(heard) == 'number' and heard > 0 then
        return 1
      end
    end
  end
end
redis.pcall('PUBLISH', ARGV[2], ARGV[3])
return 1
