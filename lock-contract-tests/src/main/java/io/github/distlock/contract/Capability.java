package io.github.distlock.contract;

/**
 * An optional ability of a lock backend. The contract tests of an ability run only for
 * backends that declare it ({@link AbstractLockContractTest#capabilities()}); everything
 * else runs for every backend.
 */
public enum Capability {

    /** {@code LockHandle.fencingToken()} issues tokens that strictly increase per key. */
    FENCING,

    /**
     * Waiters queue in Redis, first come, first served, and a release hands the lock to
     * the first of them.
     */
    WAIT_QUEUE,

    /**
     * A {@link io.github.distlock.testsupport.RedisFaultProxy} can sit between the
     * application and Redis ({@link ContractRedis#startFaultProxy()}): a single endpoint,
     * so a standalone server, not a Cluster or a Sentinel group.
     */
    FAULT_PROXY,

    /**
     * The client re-sends a command whose reply a dropped connection lost (Lettuce,
     * at-least-once), so such an acquisition still succeeds. A client that does not
     * (Jedis, at-most-once) fails the call instead, and the lock is left free once the
     * call's undo has run.
     */
    CLIENT_RESENDS,

    /**
     * {@code LockService.supportsMinHold()}: a minimum hold
     * ({@code LockRequest.withMinHold}) and {@code LockHandle.extend}, with a
     * compare-and-shorten and a compare-and-set of the lease on the holder's own token.
     */
    MIN_HOLD

}
