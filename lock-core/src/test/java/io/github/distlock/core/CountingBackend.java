package io.github.distlock.core;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Passes every call to the real backend and counts acquire attempts (bare and queueing
 * alike), so a test can tell a wake-up from a poll.
 */
class CountingBackend implements QueueingLockBackend, FencingLockBackend {

    final AtomicLong acquireAttempts = new AtomicLong();

    private final LockBackend delegate;

    /**
     * @param delegate a backend with a wait queue and fencing tokens, as the Redis
     * backends are
     */
    CountingBackend(LockBackend delegate) {
        this.delegate = delegate;
    }

    @Override
    public LockKey lockKey(String name) {
        return delegate.lockKey(name);
    }

    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        acquireAttempts.incrementAndGet();
        return ((QueueingLockBackend) delegate).tryAcquire(key, token, ttlMillis, queueMillis, queued, fencingToken);
    }

    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
        acquireAttempts.incrementAndGet();
        return delegate.tryAcquire(key, token, ttlMillis);
    }

    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        return ((FencingLockBackend) delegate).issueFencingToken(key, token, ttlMillis);
    }

    @Override
    public boolean release(LockKey key, String token) {
        return delegate.release(key, token);
    }

    @Override
    public AcquireResult stopWaiting(LockKey key, String token, long ttlMillis) {
        return ((QueueingLockBackend) delegate).stopWaiting(key, token, ttlMillis);
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        delegate.renew(renewals, outcomes);
    }

}
