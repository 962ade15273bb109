package io.github.distlock.core;

import java.util.List;

/**
 * Where locks are stored: the three atomic operations every lock needs. The single-Redis backend
 * and a Redlock backend over several masters both implement it, so waiting, renewal and the
 * annotation are written once, in {@link DefaultLockService} and {@link LeaseWatchdog}.
 *
 * <p>Waiting: a backend queues the callers that will wait, and its release hands the lock to the
 * longest-waiting live one and tells it so through {@link LockWaiters#handedOver}. This avoids a
 * herd of waiters racing for every release, and a releaser re-acquiring ahead of them.
 *
 * <p>Implementations throw {@link io.github.distlock.LockBackendException} when the store cannot
 * be reached or answers with an error, and must bound every call by their operation timeout.
 */
public interface LockBackend {

    /**
     * Sets the lock if it is free, and returns a fresh fencing token with it. A caller that will
     * wait joins the key's wait queue, so that a release can hand the lock straight to it
     * ({@link LockWaiters#handedOver}); it stays queued for {@code queueMillis} unless it calls
     * again (which refreshes its place) or {@link #stopWaiting}.
     *
     * @param key the lock
     * @param token this acquisition's unique value; it also names the caller in the wait queue
     * @param ttlMillis the lease in milliseconds
     * @param queueMillis how long to keep the caller queued if the lock is taken (0: do not queue,
     *        the caller will not wait)
     * @param queued whether an earlier call with this token may have queued it, in which case a
     *        release may already have handed the lock to it
     * @return the outcome: the fencing token if acquired, else the holder's remaining lease
     */
    AcquireAttempt tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued);

    /**
     * Sets the lock if it is free, and does nothing else: no fencing token, no queue entry, no
     * holder's lease on failure. The cheapest acquisition there is (for Redis, one
     * {@code SET NX PX}); the caller asks for the fencing token later, with
     * {@link #issueFencingToken}, if it needs one.
     *
     * @param key the lock
     * @param token this acquisition's unique value
     * @param ttlMillis the lease in milliseconds
     * @return whether the lock was set
     */
    boolean tryAcquireWithoutFencingToken(LockKey key, String token, long ttlMillis);

    /**
     * Issues the next fencing token of the lock, but only if it still holds {@code token}: a token
     * drawn while the lock is ours is larger than every token of earlier holders and smaller than
     * every token of later ones, exactly like a token drawn with the acquisition.
     *
     * @param key the lock
     * @param token the value the lock must still hold
     * @param ttlMillis the lock's lease in milliseconds; the fencing counter outlives it
     * @return the fencing token ({@code > 0}), or 0 if the lock no longer holds {@code token}
     */
    long issueFencingToken(LockKey key, String token, long ttlMillis);

    /**
     * Deletes the lock only if it still holds {@code token}. A backend that queues waiters hands
     * the lock to the next live one instead of deleting it.
     *
     * @return {@code true} if our lock was deleted or handed over
     */
    boolean release(LockKey key, String token);

    /**
     * Takes a waiter that gives up out of the wait queue. A release may have handed the lock to it
     * just before: then the caller owns the lock and must use or release it.
     *
     * @param key the lock
     * @param token the waiter's token
     * @return the fencing token if the lock was handed to this waiter, otherwise 0
     */
    long stopWaiting(LockKey key, String token);

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
