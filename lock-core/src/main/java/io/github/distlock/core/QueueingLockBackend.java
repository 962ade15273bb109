package io.github.distlock.core;

/**
 * A {@link LockBackend} with a wait queue per lock: a caller that will wait queues with
 * its attempt, and a release hands the lock straight to the longest-waiting live waiter
 * and announces it, so that {@link LockWaiters#handedOver} wakes exactly that waiter,
 * which already owns the lock. This avoids a herd of waiters racing for every release,
 * and a releaser re-acquiring ahead of them; waits become first come, first served.
 *
 * <pre>{@code
 * AcquireResult attempt = queueing.tryAcquire(key, token, ttlMillis, 3_000, false, false);
 * if (!attempt.acquired()) {
 *     // queued for 3 s: wait for a hand-over, then call again (refreshing the place) or stopWaiting
 * }
 * }</pre>
 */
public interface QueueingLockBackend extends LockBackend {

    /**
     * Sets the lock if it is free; otherwise queues the caller, so that a release can
     * hand the lock straight to it. It stays queued for {@code queueMillis} unless it
     * calls again (which refreshes its place) or {@link #stopWaiting}.
     * @param key the lock
     * @param token this acquisition's unique value; it also names the caller in the wait
     * queue
     * @param ttlMillis the lease in milliseconds
     * @param queueMillis how long to keep the caller queued if the lock is taken (0: do
     * not queue, the caller will not wait)
     * @param queued whether an earlier call with this token may have queued it
     * @param fencingToken whether to draw a fencing token with the acquisition (only a
     * backend that is also a {@link FencingLockBackend} is asked for one)
     * @return the outcome: if acquired, the lease left (and the fencing token if asked
     * for); if not, the holder's lease and the fencing counter as of this attempt
     */
    AcquireResult tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken);

    /**
     * Whether a caller that will wait tries {@link #tryAcquire(LockKey, String, long)}
     * first, and queues only if that finds the lock taken. Right where that attempt costs
     * less than one that may queue: on Redis a bare {@code SET NX PX} against a script. A
     * store where a failed attempt costs as much as joining the line (ZooKeeper creates a
     * node and deletes it again) answers {@code false}, and its callers that will wait
     * queue with their first attempt.
     *
     * <pre>{@code
     * if (!fencing && queueing.triesBeforeQueueing()) {
     *     attempt = queueing.tryAcquire(key, token, ttlMillis);   // then queue only if taken
     * }
     * }</pre>
     * @return {@code true} unless the store says otherwise
     */
    default boolean triesBeforeQueueing() {
        return true;
    }

    /**
     * Takes a waiter that gives up out of the wait queue. A release may have handed the
     * lock to it just before: then the caller owns the lock and must use or release it.
     * @param key the lock
     * @param token the waiter's token
     * @param ttlMillis the lease the waiter asked for; the fencing counter outlives it
     * @return acquired, with the lease left (and a fencing token if the backend draws
     * them), if the lock was handed to this waiter; otherwise not acquired
     */
    AcquireResult stopWaiting(LockKey key, String token, long ttlMillis);

    /**
     * Confirms a lock that a release handed to this caller (announced to
     * {@link LockWaiters#handedOver}, or found by {@link #stopWaiting}) before the caller
     * counts it as held. The hand-over was written by the releaser's connection; a
     * backend that waits for replicas to confirm its writes
     * ({@code distributed-lock.replica-acks}) cannot count on that write, so it writes
     * the lock once more on its own connection and waits for that. Called only with a
     * proven, newer hand-over; this default trusts it without a call.
     * @param key the lock
     * @param token the waiter's token, which the release set as the lock's value
     * @param ttlMillis the lease the waiter asked for
     * @param fencingToken the fencing token that came with the hand-over
     * @return acquired, with {@code fencingToken}, if the lock holds {@code token} and is
     * confirmed; not acquired if it no longer holds it (expired, or lost to a failover),
     * and the caller waits on
     * @throws io.github.distlock.LockBackendException if the store cannot confirm it (too
     * few replicas did); the caller then releases it
     */
    default AcquireResult confirmHandOver(LockKey key, String token, long ttlMillis, long fencingToken) {
        return AcquireResult.acquired(fencingToken, ttlMillis);
    }

}
