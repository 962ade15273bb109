package io.github.distlock.core;

import java.util.List;

/**
 * Where locks are stored: the three atomic operations every lock needs. The single-Redis backend
 * and a Redlock backend over several masters both implement it, so waiting, renewal and the
 * annotation are written once, in {@link DefaultLockService} and {@link LeaseWatchdog}.
 *
 * <p>Implementations throw {@link io.github.distlock.LockBackendException} when the store cannot
 * be reached or answers with an error, and must bound every call by their operation timeout.
 */
public interface LockBackend {

    /**
     * Sets the lock if it is free, and returns a fresh fencing token with it.
     *
     * @param key the lock
     * @param token this acquisition's unique value
     * @param ttlMillis the lease in milliseconds
     * @param waitMillis how much longer the caller will wait if the lock is taken (0: not at all),
     *        so the holder's release knows to wake it up
     * @return the outcome: the fencing token if acquired, else the holder's remaining lease
     */
    AcquireAttempt tryAcquire(LockKey key, String token, long ttlMillis, long waitMillis);

    /**
     * Deletes the lock only if it still holds {@code token}.
     *
     * @return {@code true} if our lock was deleted
     */
    boolean release(LockKey key, String token);

    /**
     * Extends each lease that still holds its token, in as few round trips as the store allows.
     *
     * @return one outcome per renewal, in the same order
     */
    List<RenewalOutcome> renew(List<LeaseRenewal> renewals);

    /**
     * The result of one acquire attempt.
     *
     * @param fencingToken the new fencing token ({@code > 0}) if acquired, otherwise 0
     * @param holderTtlMillis if not acquired: the holder's remaining lease in ms, or 0 when unknown
     *        (a foreign key without expiry)
     */
    record AcquireAttempt(long fencingToken, long holderTtlMillis) {

        /** Whether the lock was acquired. */
        public boolean acquired() {
            return fencingToken > 0;
        }
    }

    /**
     * One lease to extend.
     *
     * @param key the lock
     * @param token the value the lock must still hold
     * @param ttlMillis the new lease in ms
     */
    record LeaseRenewal(LockKey key, String token, long ttlMillis) {
    }

    /** What happened to one lease in a renewal batch. */
    enum RenewalOutcome {
        /** The lease was extended. */
        RENEWED,
        /** The key is gone or holds another owner's token: the lock is lost for good. */
        LOST,
        /** The store could not be asked; the lease may still be ours until it runs out. */
        FAILED
    }
}
