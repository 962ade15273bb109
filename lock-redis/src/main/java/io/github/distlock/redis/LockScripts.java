package io.github.distlock.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

import io.github.distlock.core.InspectableLockBackend.LockState;
import io.github.distlock.core.LockBackend.LeaseRenewal;

/**
 * The Lua scripts of the lock protocol ({@link RedisLockProtocol}), and how renewals are
 * grouped into script calls. Free of driver classes, so it loads without Lettuce.
 */
final class LockScripts {

    private static final String FENCING = "fencing.lua";

    /** {@code SET NX PX}, with a fencing token and a wait-queue entry if asked. */
    static final LuaScript ACQUIRE = LuaScript.load("acquire.lua", FENCING);

    /** Compare-and-delete, or hand over to the longest-waiting live waiter. */
    static final LuaScript RELEASE = LuaScript.load("release.lua", FENCING);

    /**
     * A Redlock node's release: compare-and-delete, publishing the release hint on the
     * hint channel (or to the head of the key's wake-up line).
     */
    static final LuaScript REDLOCK_RELEASE = LuaScript.load("redlock_release.lua");

    /**
     * A Redlock node's acquire vote: {@code SET NX PX} in a script, sent as an
     * incarnation; it answers with the node's clock too ({@link ServerClockListener}).
     */
    static final LuaScript REDLOCK_VOTE = LuaScript.load("redlock_vote.lua");

    /**
     * A Redlock arbiter node's acquire: {@code SET NX PX}, or a place in the key's
     * wake-up line; it answers with the node's clock too.
     */
    static final LuaScript REDLOCK_ACQUIRE = LuaScript.load("redlock_acquire.lua");

    /**
     * Compare-and-shorten: the release of a lock whose minimum hold has not passed yet.
     */
    static final LuaScript RELEASE_AFTER = LuaScript.load("release_after.lua");

    /** Compare-and-{@code PEXPIRE} of one lock, to a lease of the caller's choice. */
    static final LuaScript EXTEND = LuaScript.load("extend.lua");

    /** Compare-and-{@code PEXPIRE} for many keys at once. */
    static final LuaScript RENEW = LuaScript.load("renew.lua");

    /**
     * A Redlock node's renewal, sent as an incarnation: {@link #RENEW}, answered with the
     * node's clock after the leases' answers.
     */
    static final LuaScript REDLOCK_RENEW = LuaScript.load("redlock_renew.lua");

    /** A waiter leaves the queue (and takes a lock handed to it meanwhile). */
    static final LuaScript CANCEL = LuaScript.load("cancel.lua", FENCING);

    /** The fencing token of a lock taken without one. */
    static final LuaScript FENCE = LuaScript.load("fence.lua", FENCING);

    /**
     * Raises the fencing counter to a token drawn elsewhere, while the lock is still ours
     * (Redlock).
     */
    static final LuaScript RAISE_FENCE = LuaScript.load("raise_fence.lua");

    /**
     * Read-only: the lock's PTTL, wait-queue length and fencing counter, never its value
     * (the Actuator).
     */
    static final LuaScript INSPECT = LuaScript.load("inspect.lua");

    /**
     * Redis's {@code PTTL} of a key that does not exist, and of one without an expiry.
     */
    private static final long PTTL_NO_KEY = -2;

    private static final long PTTL_NO_EXPIRY = -1;

    /**
     * The reply of {@link #INSPECT}, {@code {PTTL of the lock, queue length, fencing
     * counter}}, as a lock's state.
     */
    static LockState lockState(List<Object> reply) {
        long pttl = (Long) reply.get(0);
        long queueLength = (Long) reply.get(1);
        long fence = (Long) reply.get(2);
        if (pttl == PTTL_NO_KEY) {
            return LockState.free(queueLength, fence);
        }
        return LockState.held(pttl == PTTL_NO_EXPIRY ? LockState.NO_EXPIRY : pttl, queueLength, fence);
    }

    /**
     * The fencing counter outlives the lock so tokens keep increasing across
     * acquisitions. Every acquisition writes it with this expiry (or the lease, if
     * longer), so it goes a day after the key's last use and the server clock takes over
     * (see fencing.lua).
     */
    static final long FENCE_COUNTER_TTL_MILLIS = TimeUnit.DAYS.toMillis(1);

    /** Most keys renewed by one script call, so one call never blocks Redis for long. */
    static final int MAX_RENEWALS_PER_CALL = 1000;

    private LockScripts() {
    }

    /**
     * Groups renewals into script calls of up to 1,000 keys. In a Cluster one script may
     * only touch keys of one slot, so there the groups follow slots; elsewhere any keys
     * go together.
     * @return each group as indexes into {@code renewals}
     */
    static List<List<Integer>> batches(List<LeaseRenewal> renewals, boolean cluster) {
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < renewals.size(); i++) {
            int slot = cluster ? ClusterSlotHashUtil.calculateSlot(renewals.get(i).key().storeKey()) : 0;
            bySlot.computeIfAbsent(slot, s -> new ArrayList<>()).add(i);
        }
        List<List<Integer>> batches = new ArrayList<>();
        for (List<Integer> group : bySlot.values()) {
            for (int from = 0; from < group.size(); from += MAX_RENEWALS_PER_CALL) {
                batches.add(group.subList(from, Math.min(group.size(), from + MAX_RENEWALS_PER_CALL)));
            }
        }
        return batches;
    }

}
