-- Issue the fencing token of a lock that was acquired without one (a bare SET NX PX), on demand.
-- KEYS[1] lock key, KEYS[2] fencing counter (see acquire.lua); ARGV[1] the holder's token,
-- ARGV[2] counter lifetime in ms.
-- Returns the fencing token if the lock still holds ARGV[1], otherwise 0. Drawn only while the
-- lock is ours, the token orders this holder after every earlier one and before every later one,
-- exactly as a token drawn by acquire.lua does; a holder that lost its lock gets none.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return next_fence(KEYS[2], ARGV[2])
end
return 0
