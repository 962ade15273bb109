package io.github.distlock.core;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Passes every call to the real backend and counts acquire attempts (bare and queueing alike), so a
 * test can tell a wake-up from a poll.
 */
class CountingBackend implements LockBackend {

    final AtomicLong acquireAttempts = new AtomicLong();
    private final LockBackend delegate;

    CountingBackend(LockBackend delegate) {
        this.delegate = delegate;
    }

    @Override
    public AcquireAttempt tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued) {
        acquireAttempts.incrementAndGet();
        return delegate.tryAcquire(key, token, ttlMillis, queueMillis, queued);
    }

    @Override
    public AcquireAttempt tryAcquireWithoutFencingToken(LockKey key, String token, long ttlMillis) {
        acquireAttempts.incrementAndGet();
        return delegate.tryAcquireWithoutFencingToken(key, token, ttlMillis);
    }

    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        return delegate.issueFencingToken(key, token, ttlMillis);
    }

    @Override
    public boolean release(LockKey key, String token) {
        return delegate.release(key, token);
    }

    @Override
    public AcquireAttempt stopWaiting(LockKey key, String token, long ttlMillis) {
        return delegate.stopWaiting(key, token, ttlMillis);
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        delegate.renew(renewals, outcomes);
    }
}
