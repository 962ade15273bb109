package io.github.distlock.core;

/**
 * A {@link LockBackend} that can change the lease of a lock it holds, on its own token
 * only: what a minimum hold ({@link io.github.distlock.LockRequest#withMinHold}) and
 * {@link io.github.distlock.LockHandle#extend} need.
 *
 * <p>
 * Both operations compare before they write: a lock that no longer holds {@code token} is
 * left alone, whoever holds it now, so neither can lengthen or cut another owner's lease.
 * Both are idempotent for their arguments (a call sent twice leaves the lease as one call
 * does, give or take the time between them), as every {@link LockBackend} call must be.
 *
 * <pre>{@code
 * if (backend instanceof LeaseAdjustingLockBackend adjusting && adjusting.supportsLeaseAdjustment()) {
 *     adjusting.releaseAfter(key, token, 4_000);   // held 4 s more at most, then free
 *     adjusting.extend(key, token, 60_000);        // (on a lock still held) 60 s from now
 * }
 * }</pre>
 */
public interface LeaseAdjustingLockBackend extends LockBackend {

    /**
     * Releases the lock later: if it still holds {@code token}, it stays held for at most
     * {@code remainingMillis} more and then expires, without being handed to anyone
     * before then. The lease is only ever shortened: a lock whose lease has less than
     * {@code remainingMillis} left keeps it. With {@code remainingMillis <= 0} this is
     * {@link #release}: delete, or hand over to the next waiter.
     *
     * <p>
     * Waiters of a lock released this way take it when it expires; a store cannot hand a
     * lock over when an expiry fires, so they find it free by polling, which every waiter
     * does no later than the holder's lease end.
     * @param key the lock
     * @param token the value the lock must still hold
     * @param remainingMillis how long the lock may stay held from now, in ms
     * @return {@code true} if the lock held {@code token} (it is now released, or will
     * expire within {@code remainingMillis}); {@code false} if it was no longer ours
     * @throws io.github.distlock.LockBackendException if the store could not be asked;
     * the outcome is then unknown
     */
    boolean releaseAfter(LockKey key, String token, long remainingMillis);

    /**
     * Sets the lock's remaining lease to {@code ttlMillis} from now, longer or shorter
     * than it was, if it still holds {@code token}.
     * @param key the lock
     * @param token the value the lock must still hold
     * @param ttlMillis the new lease in ms, at least 1
     * @return {@code true} if the lease was set; {@code false} if the lock no longer
     * holds {@code token}. Over several stores, as for {@link #renew}: the lease is
     * surely ours for {@link #renewedValidityMillis} from the call's start.
     * @throws io.github.distlock.LockBackendException if the store could not be asked;
     * the outcome is then unknown
     */
    boolean extend(LockKey key, String token, long ttlMillis);

    /**
     * Whether this backend can do both operations now. A backend over other stores (a
     * Redlock over custom nodes) can only if every one of them can; such a backend
     * implements this interface and answers {@code false} when one of them cannot.
     * @return {@code true} unless the backend knows better
     */
    default boolean supportsLeaseAdjustment() {
        return true;
    }

}
