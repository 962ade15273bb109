package io.github.distlock.redlock;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.redis.RaisableFencingLockBackend;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.InspectableLockBackend.LockState;
import io.github.distlock.core.InspectableLockBackend.Reachability;
import io.github.distlock.core.LeaseAdjustingLockBackend;
import io.github.distlock.core.LockBackend.AcquireResult;
import io.github.distlock.core.LockBackend.LeaseRenewal;
import io.github.distlock.core.LockBackend.RenewalOutcomes;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.NonBlockingLockBackend;

/**
 * A Redlock node over any {@link FencingLockBackend} (a custom store, a test's wrapper
 * around a Redis node): no wake-up line and no release that sends its own hint, so it
 * takes and releases the lock the plain way, and the Redlock sends its release hints for
 * it. Sent without blocking only if it is a {@link NonBlockingLockBackend}.
 */
final class FencingBackendRedlockNode implements RedlockNode {

    private final FencingLockBackend node;

    FencingBackendRedlockNode(FencingLockBackend node) {
        this.node = node;
    }

    @Override
    public AcquireResult acquire(LockKey key, String token, long ttlMillis) {
        return node.tryAcquire(key, token, ttlMillis);
    }

    @Override
    public CompletableFuture<AcquireResult> acquireAsync(LockKey key, String token, long ttlMillis) {
        return node instanceof NonBlockingLockBackend nonBlocking ? nonBlocking.tryAcquireAsync(key, token, ttlMillis)
                : null;
    }

    @Override
    public AcquireResult acquireOrWait(LockKey key, String token, long ttlMillis, String waiterId, long aliveMillis) {
        return acquire(key, token, ttlMillis);
    }

    @Override
    public CompletableFuture<AcquireResult> acquireOrWaitAsync(LockKey key, String token, long ttlMillis,
            String waiterId, long aliveMillis) {
        return acquireAsync(key, token, ttlMillis);
    }

    @Override
    public boolean release(LockKey key, String token) {
        return node.release(key, token);
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(LockKey key, String token) {
        return node instanceof NonBlockingLockBackend nonBlocking ? nonBlocking.releaseAsync(key, token) : null;
    }

    @Override
    public boolean sendsReleaseHints() {
        return false;
    }

    @Override
    public boolean releaseWithHint(LockKey key, String token, ReleaseHint releaseHint) {
        return release(key, token);
    }

    @Override
    public CompletableFuture<Boolean> releaseWithHintAsync(LockKey key, String token, ReleaseHint releaseHint) {
        return releaseAsync(key, token);
    }

    @Override
    public boolean shortensLeases() {
        return node instanceof LeaseAdjustingLockBackend adjusting && adjusting.supportsLeaseAdjustment();
    }

    @Override
    public boolean releaseAfter(LockKey key, String token, long remainingMillis) {
        if (node instanceof LeaseAdjustingLockBackend adjusting && adjusting.supportsLeaseAdjustment()) {
            return adjusting.releaseAfter(key, token, remainingMillis);
        }
        throw new UnsupportedOperationException("Redlock node " + node.getClass().getName() + " cannot shorten a "
                + "lease (it does not implement LeaseAdjustingLockBackend), so it cannot hold a lock for a minimum "
                + "time");
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        node.renew(renewals, outcomes);
    }

    @Override
    public long drawFencingToken(LockKey key, String token, long ttlMillis) {
        return node.issueFencingToken(key, token, ttlMillis);
    }

    @Override
    public boolean raiseFencingCounter(LockKey key, String token, long fencingToken, long ttlMillis) {
        if (node instanceof RaisableFencingLockBackend raisable) {
            return raisable.raiseFencingCounter(key, token, fencingToken, ttlMillis);
        }
        throw new UnsupportedOperationException(node.getClass().getName() + " cannot raise its fencing counter, so "
                + "it cannot take part in a Redlock's fencing tokens: implement RaisableFencingLockBackend");
    }

    @Override
    public LockState inspect(LockKey key) {
        return inspectable().inspect(key);
    }

    @Override
    public Reachability ping() {
        return inspectable().ping();
    }

    private InspectableLockBackend inspectable() {
        if (node instanceof InspectableLockBackend inspectable) {
            return inspectable;
        }
        throw new UnsupportedOperationException("Redlock node " + node.getClass().getName()
                + " cannot be inspected: it does not implement InspectableLockBackend");
    }

    /** Closes the backend if it can be closed: the Redlock owns its nodes. */
    @Override
    public void close() throws Exception {
        if (node instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }

}
