package io.github.distlock.redlock;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.distlock.core.InspectableLockBackend.LockState;
import io.github.distlock.core.InspectableLockBackend.Reachability;
import io.github.distlock.core.LockBackend.AcquireResult;
import io.github.distlock.core.LockBackend.LeaseRenewal;
import io.github.distlock.core.LockBackend.RenewalOutcomes;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.LettuceLockBackend;

/**
 * A Redis node of a Redlock: the Redlock's own scripts (wake-up line, a release that
 * sends its own hint) on a {@link LettuceLockBackend}. Its releases always run the
 * Redlock's release script, which looks for no wait queue (a Redlock keeps none on its
 * nodes), whether they send a release hint or not.
 */
final class RedisRedlockNode implements RedlockNode {

    private final LettuceLockBackend redis;

    RedisRedlockNode(LettuceLockBackend redis) {
        this.redis = redis;
    }

    @Override
    public AcquireResult acquire(LockKey key, String token, long ttlMillis) {
        return redis.tryAcquire(key, token, ttlMillis);
    }

    @Override
    public CompletableFuture<AcquireResult> acquireAsync(LockKey key, String token, long ttlMillis) {
        return redis.tryAcquireAsync(key, token, ttlMillis);
    }

    @Override
    public AcquireResult acquireOrWait(LockKey key, String token, long ttlMillis, String waiterId, long aliveMillis) {
        return redis.tryAcquireOrWait(key, token, ttlMillis, waiterId, aliveMillis);
    }

    @Override
    public CompletableFuture<AcquireResult> acquireOrWaitAsync(LockKey key, String token, long ttlMillis,
            String waiterId, long aliveMillis) {
        return redis.tryAcquireOrWaitAsync(key, token, ttlMillis, waiterId, aliveMillis);
    }

    @Override
    public boolean release(LockKey key, String token) {
        return redis.releaseAndHint(key, token, null, null, false);
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(LockKey key, String token) {
        return redis.releaseAndHintAsync(key, token, null, null, false);
    }

    @Override
    public boolean sendsReleaseHints() {
        return true;
    }

    @Override
    public boolean releaseWithHint(LockKey key, String token, ReleaseHint releaseHint) {
        return redis.releaseAndHint(key, token, releaseHint.channel(), releaseHint.hint(), releaseHint.toLineHead());
    }

    @Override
    public CompletableFuture<Boolean> releaseWithHintAsync(LockKey key, String token, ReleaseHint releaseHint) {
        return redis.releaseAndHintAsync(key, token, releaseHint.channel(), releaseHint.hint(),
                releaseHint.toLineHead());
    }

    @Override
    public boolean shortensLeases() {
        return true;
    }

    /**
     * {@code release_after.lua}, which touches the lock's key alone: no wait queue on a
     * Redlock node.
     */
    @Override
    public boolean releaseAfter(LockKey key, String token, long remainingMillis) {
        return redis.releaseAfter(key, token, remainingMillis);
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        redis.renew(renewals, outcomes);
    }

    @Override
    public long drawFencingToken(LockKey key, String token, long ttlMillis) {
        return redis.issueFencingToken(key, token, ttlMillis);
    }

    @Override
    public boolean raiseFencingCounter(LockKey key, String token, long fencingToken, long ttlMillis) {
        return redis.raiseFencingCounter(key, token, fencingToken, ttlMillis);
    }

    @Override
    public LockState inspect(LockKey key) {
        return redis.inspect(key);
    }

    @Override
    public Reachability ping() {
        return redis.ping();
    }

    @Override
    public void close() {
        redis.close();
    }

}
