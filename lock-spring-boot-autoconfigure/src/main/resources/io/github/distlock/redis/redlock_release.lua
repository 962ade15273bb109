-- Redlock's release on one of its nodes: compare-and-delete, then the release hint.
-- KEYS[1] lock key; ARGV[1] our token; ARGV[2] the hint channel and ARGV[3] the hint,
-- "<release id>:<lock key>" (the same on every node, so that a waiter wakes once per release), both
-- left out on a node that does not announce this release.
-- Returns 1 if our lock was deleted, 0 if it was no longer ours (left alone, and nothing announced).
-- A Redlock keeps no wait queue on its nodes, so there is nothing to hand over (see release.lua for a
-- single Redis). The hint leaves with the delete itself: no command of its own per node, and waiters
-- hear of the release before the releaser has even counted its majority. pcall: a user whose ACL
-- does not allow the channel still releases; waiters then find the lock by polling.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
if ARGV[2] then
  redis.pcall('PUBLISH', ARGV[2], ARGV[3])
end
return 1
