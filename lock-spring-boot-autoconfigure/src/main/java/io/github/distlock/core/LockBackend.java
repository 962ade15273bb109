package io.github.distlock.core;

import java.util.List;

/**
 * Where locks are stored: the few atomic operations every lock needs. The single-Redis backend
 * and a Redlock backend over several masters both implement it, so waiting, renewal and the
 * annotation are written once, in {@link DefaultLockService} and {@link LeaseWatchdog}.
 *
 * <p>Waiting: a backend queues the callers that will wait, and its release hands the lock to the
 * longest-waiting live one and tells it so through {@link LockWaiters#handedOver}. This avoids a
 * herd of waiters racing for every release, and a releaser re-acquiring ahead of them.
 *
 * <p>Faults are the normal case, and every operation must stay correct when it runs once, twice
 * (a client that re-sends a command after a reconnect) or without its reply reaching us:
 * <ul>
 * <li>each operation is idempotent for its token: acquiring a lock that already holds the token
 * succeeds, with a freshly drawn fencing token and the lease Redis has left;</li>
 * <li>calls wait for their reply whatever the calling thread's interrupt flag says (and leave the
 * flag as they found it), and are bounded by the backend's operation timeout;</li>
 * <li>a call that fails throws {@link io.github.distlock.LockBackendException}; the caller then
 * treats the outcome as unknown and undoes it.</li>
 * </ul>
 */
public interface LockBackend {

    /**
     * Sets the lock if it is free, and returns a fencing token with it. A caller that will wait
     * joins the key's wait queue, so that a release can hand the lock straight to it
     * ({@link LockWaiters#handedOver}); it stays queued for {@code queueMillis} unless it calls
     * again (which refreshes its place) or {@link #stopWaiting}.
     *
     * @param key the lock
     * @param token this acquisition's unique value; it also names the caller in the wait queue
     * @param ttlMillis the lease in milliseconds
     * @param queueMillis how long to keep the caller queued if the lock is taken (0: do not queue,
     *        the caller will not wait)
     * @param queued whether an earlier call with this token may have queued it
     * @return the outcome: the fencing token and lease left if acquired, else the holder's lease
     *         and the fencing counter as of this attempt
     */
    AcquireAttempt tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued);

    /**
     * Sets the lock if it is free, and does nothing else: no fencing token, no queue entry. The
     * cheapest acquisition there is (for Redis, one {@code SET NX PX}); the caller asks for the
     * fencing token later, with {@link #issueFencingToken}, if it needs one.
     *
     * @param key the lock
     * @param token this acquisition's unique value
     * @param ttlMillis the lease in milliseconds
     * @return the outcome; if acquired its fencing token is 0 (not drawn), and if not the holder's
     *         lease may be unknown (0)
     */
    AcquireAttempt tryAcquireWithoutFencingToken(LockKey key, String token, long ttlMillis);

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
     * @return {@code true} if our lock was deleted or handed over (by this call, or by an earlier
     *         delivery of it whose reply was lost)
     */
    boolean release(LockKey key, String token);

    /**
     * Takes a waiter that gives up out of the wait queue. A release may have handed the lock to it
     * just before: then the caller owns the lock and must use or release it.
     *
     * @param key the lock
     * @param token the waiter's token
     * @param ttlMillis the lease the waiter asked for; the fencing counter outlives it
     * @return acquired, with a fencing token and the lease left, if the lock was handed to this
     *         waiter; otherwise not acquired
     */
    AcquireAttempt stopWaiting(LockKey key, String token, long ttlMillis);

    /**
     * Extends each lease that still holds its token, in as few round trips as the store allows.
     * Tells {@code outcomes} about each lease as soon as its answer is in, on the calling thread,
     * so that one slow node does not hold up the leases on the others; returns once every lease
     * has its outcome, within one operation timeout for the whole list.
     *
     * @param renewals the leases to extend
     * @param outcomes told once per renewal, with its index in {@code renewals}
     */
    void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes);

    /** Receives the outcome of each renewal of a {@link #renew} call, as it comes in. */
    @FunctionalInterface
    interface RenewalOutcomes {

        /**
         * @param index the renewal's position in the list given to {@link #renew}
         * @param outcome what happened to it
         */
        void outcome(int index, RenewalOutcome outcome);
    }

    /**
     * The result of one acquire attempt.
     *
     * @param acquired whether the lock now holds the caller's token
     * @param fencingToken the fencing token ({@code > 0}) if one was drawn, otherwise 0
     * @param leaseMillis if acquired: the lease left when the store answered, counted by the store
     *        (a hand-over found late has less left than the ttl asked for)
     * @param holderTtlMillis if not acquired: the holder's remaining lease in ms, or 0 when unknown
     * @param fencingCounter if not acquired: the key's fencing counter when the attempt ran (0 when
     *        unknown). A hand-over announced with a fencing token not above it happened before
     *        this attempt, and is stale.
     */
    record AcquireAttempt(boolean acquired, long fencingToken, long leaseMillis, long holderTtlMillis,
            long fencingCounter) {

        /** An acquisition, with its fencing token (0 if none was drawn) and the lease left in ms. */
        public static AcquireAttempt acquired(long fencingToken, long leaseMillis) {
            return new AcquireAttempt(true, fencingToken, leaseMillis, 0, 0);
        }

        /** A lock held by someone else. */
        public static AcquireAttempt notAcquired(long holderTtlMillis, long fencingCounter) {
            return new AcquireAttempt(false, 0, 0, holderTtlMillis, fencingCounter);
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
