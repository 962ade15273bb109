package io.github.distlock.redis;

import java.util.List;

import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.LeaseAdjustingLockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.QueueingLockBackend;

/**
 * A lock backend that is the Redis lock protocol ({@link RedisLockProtocol}) over one
 * transport: every operation the two single-Redis backends share, written once.
 * {@link LettuceLockBackend} adds the non-blocking calls and a Redlock node's commands;
 * {@link SpringDataLockBackend} adds nothing but its transport.
 */
abstract sealed class RedisProtocolBackend implements QueueingLockBackend, FencingLockBackend, InspectableLockBackend,
        LeaseAdjustingLockBackend, AutoCloseable permits LettuceLockBackend, SpringDataLockBackend {

    final RedisLockProtocol protocol;

    private final String keyPrefix;

    /**
     * What the health check calls the node or Sentinel master; a Cluster's masters are
     * named by address.
     */
    private final String name;

    RedisProtocolBackend(RedisLockProtocol protocol, String keyPrefix, String name) {
        this.protocol = protocol;
        this.keyPrefix = keyPrefix;
        this.name = name;
    }

    @Override
    public LockKey lockKey(String name) {
        return RedisKeyNaming.lockKey(keyPrefix, name);
    }

    /**
     * A bare {@code SET NX PX GET}: no script runs on the server. Answered with our own
     * token, it was sent again after its first delivery took the lock: ours all the same,
     * the lease counted from before the first delivery.
     */
    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
        return protocol.tryAcquire(key, token, ttlMillis);
    }

    /**
     * {@code acquire.lua}: the lock, a fencing token and a place in the wait queue, as
     * asked.
     */
    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        return protocol.tryAcquire(key, token, ttlMillis, queueMillis, queued, fencingToken);
    }

    /**
     * With replica acknowledgements asked for, a hand-over counts once enough replicas
     * confirm it.
     */
    @Override
    public AcquireResult confirmHandOver(LockKey key, String token, long ttlMillis, long fencingToken) {
        return protocol.confirmHandOver(key, token, ttlMillis, fencingToken);
    }

    /** {@code fence.lua}, while the lock still holds {@code token}. */
    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        return protocol.issueFencingToken(key, token, ttlMillis);
    }

    /**
     * Compare-and-delete, or hand over to the next waiter ({@code release.lua}). A
     * release whose reply a broken connection lost is sent again; "not ours" from that
     * second delivery means the first released the lock, and counts as released.
     */
    @Override
    public boolean release(LockKey key, String token) {
        return protocol.release(key, token);
    }

    /**
     * {@code release_after.lua}: compare-and-shorten, the wait queue left alone; with no
     * time left, {@link #release}.
     */
    @Override
    public boolean releaseAfter(LockKey key, String token, long remainingMillis) {
        return protocol.releaseAfter(key, token, remainingMillis);
    }

    /**
     * {@code extend.lua}: compare-and-{@code PEXPIRE}; with replica acknowledgements,
     * confirmed by {@code WAIT}.
     */
    @Override
    public boolean extend(LockKey key, String token, long ttlMillis) {
        return protocol.extend(key, token, ttlMillis);
    }

    /**
     * {@code cancel.lua}: leaves the wait queue, and takes the lock if it was handed over
     * meanwhile.
     */
    @Override
    public AcquireResult stopWaiting(LockKey key, String token, long ttlMillis) {
        return protocol.stopWaiting(key, token, ttlMillis);
    }

    /**
     * One {@code renew.lua} call per slot (up to 1,000 keys), each master's calls side by
     * side with the others'.
     */
    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        protocol.renew(renewals, outcomes);
    }

    /**
     * One script ({@code inspect.lua}) reads the PTTL, queue and counter: it never reads
     * the token.
     */
    @Override
    public LockState inspect(LockKey key) {
        return protocol.inspect(key);
    }

    /**
     * A {@code PING}; in a Cluster, one to every master that serves slots, side by side.
     * Every master holds a share of the locks, so all of them must answer.
     */
    @Override
    public Reachability ping() {
        return protocol.ping(name);
    }

}
