-- Inspect: what Redis holds for one lock, for the Actuator's locks endpoint. Read-only, and it
-- never reads the lock's value: the holder's token is a capability (whoever knows it can release
-- the lock), so it must not leave Redis through a diagnostic view.
-- KEYS[1] lock key, KEYS[2] fencing counter, KEYS[3] wait queue (see acquire.lua; one slot).
-- Returns {PTTL of the lock (-2: free, -1: held without expiry), entries in the wait queue,
-- the fencing counter, i.e. the last fencing token issued (0: none)}; one script, so one snapshot.
local counter = tonumber(redis.call('GET', KEYS[2]))
if not counter or counter % 1 ~= 0 then counter = 0 end
return {redis.call('PTTL', KEYS[1]), redis.call('ZCARD', KEYS[3]), counter}
