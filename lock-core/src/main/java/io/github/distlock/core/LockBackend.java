package io.github.distlock.core;

import java.util.List;

import io.github.distlock.LockBackendException;

/**
 * Where locks are stored: the few atomic operations every lock needs, and nothing else.
 * Waiting, renewal, undoing unknown outcomes and the annotation are written once, on top
 * of it, in {@link DefaultLockService} and {@link LeaseWatchdog}.
 *
 * <p>
 * What a store can do beyond this is a capability of its own, an interface the backend
 * may also implement, and the lock service uses it when it is there:
 * <ul>
 * <li>{@link FencingLockBackend}: fencing tokens, strictly increasing per lock;</li>
 * <li>{@link QueueingLockBackend}: a wait queue, with each release handing the lock to
 * the longest-waiting live waiter and announcing it
 * ({@link LockWaiters#handedOver});</li>
 * <li>{@link HandOverNotifications}: wake-ups, the delivery of those announcements to
 * this JVM's waiters (for Redis, a pub/sub subscription, a bean of its own; a custom
 * backend may deliver them itself).</li>
 * </ul>
 * A backend without the queue still supports waiting: the lock service polls, never
 * sleeping past the holder's lease. A request for a fencing token fails fast, naming the
 * backend, on a backend without fencing tokens.
 *
 * <p>
 * A custom backend (a Redlock over several masters, a test double) replaces the Redis one
 * by being declared as a bean:
 *
 * <pre>{@code
 * &#64;Bean
 * LockBackend lockBackend() {
 *     return new MyLockBackend(...);   // the auto-configuration then wires no Redis connection
 * }
 * }</pre>
 *
 * <p>
 * Faults are the normal case, and every operation must stay correct when it runs once,
 * twice (a client that re-sends a command after a reconnect) or without its reply
 * reaching us:
 * <ul>
 * <li>each operation is idempotent for its token: acquiring a lock that already holds the
 * token succeeds, with the lease the store has left;</li>
 * <li>calls wait for their reply whatever the calling thread's interrupt flag says (and
 * leave the flag as they found it), and are bounded by the backend's operation
 * timeout;</li>
 * <li>a call that fails throws {@link io.github.distlock.LockBackendException}; the
 * caller then treats the outcome as unknown and undoes it.</li>
 * </ul>
 */
public interface LockBackend {

    /**
     * Names the stored lock of an application's lock name. The naming belongs to the
     * store: a Redis backend adds its key prefix and a Cluster hash tag.
     * @param name the lock's name as the application gave it, for example
     * {@code order:42}
     * @return both names of the lock
     */
    LockKey lockKey(String name);

    /**
     * Sets the lock if it is free, and does nothing else: no fencing token, no queue
     * entry. The cheapest acquisition there is (for Redis, one {@code SET NX PX}).
     * @param key the lock
     * @param token this acquisition's unique value
     * @param ttlMillis the lease in milliseconds
     * @return the outcome; {@link AcquireResult#fencingToken()} is 0 (none drawn), and if
     * not acquired the holder's lease may be unknown (0)
     */
    AcquireResult tryAcquire(LockKey key, String token, long ttlMillis);

    /**
     * Deletes the lock only if it still holds {@code token}. A backend that queues
     * waiters hands the lock to the next live one instead of deleting it.
     * @return {@code true} if our lock was deleted or handed over (by this call, or by an
     * earlier delivery of it whose reply was lost)
     */
    boolean release(LockKey key, String token);

    /**
     * Extends each lease that still holds its token, in as few round trips as the store
     * allows. Tells {@code outcomes} about each lease as soon as its answer is in, on the
     * calling thread, so that one slow node does not hold up the leases on the others;
     * returns once every lease has its outcome, within one operation timeout for the
     * whole list.
     * @param renewals the leases to extend
     * @param outcomes told once per renewal, with its index in {@code renewals}
     */
    void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes);

    /**
     * How long a lease that {@link #renew} reported renewed is surely ours, counted from
     * the start of that renewal round: the ttl for a single store; a backend over several
     * stores subtracts the clock drift it allows for.
     * @param ttlMillis the lease the renewal asked for
     * @return the validity in ms, at most {@code ttlMillis}
     */
    default long renewedValidityMillis(long ttlMillis) {
        return ttlMillis;
    }

    /**
     * Whether a {@link #tryAcquire} that threw {@code failure} decided nothing only
     * because answers came too late this once (stores that are up, on a loaded machine or
     * after a pause of this JVM), having given back whatever it may have set, so that a
     * caller with wait time left tries again rather than fail. Stores that refuse, answer
     * with an error or have not answered for a while are not transient: the call fails at
     * once, as before.
     * @param failure what the attempt threw
     * @return {@code false} unless the backend knows better: every failure ends the call
     */
    default boolean isTransient(LockBackendException failure) {
        return false;
    }

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
     * The result of one acquire attempt, as the backend computed it.
     *
     * @param acquired whether the lock now holds the caller's token
     * @param validityMillis if acquired: how long the lock is surely ours, counted from
     * the moment the call started. A single store reports the lease it has left (a
     * hand-over found late has less than the ttl asked for); a quorum of stores reports
     * the ttl less the time the round took and the clock drift allowed for.
     * @param fencingToken the fencing token ({@code > 0}) if one was drawn, otherwise 0
     * @param holderTtlMillis if not acquired: the holder's remaining lease in ms, or 0
     * when unknown
     * @param fencingCounter if not acquired: the lock's fencing counter when the attempt
     * ran (0 when unknown). A hand-over announced with a fencing token not above it
     * happened before this attempt, and is stale ({@link LockWaiters}).
     */
    record AcquireResult(boolean acquired, long validityMillis, long fencingToken, long holderTtlMillis,
            long fencingCounter) {

        /**
         * Acquired: valid for {@code validityMillis} from the call's start, with a
         * fencing token or 0.
         */
        public static AcquireResult acquired(long fencingToken, long validityMillis) {
            return new AcquireResult(true, validityMillis, fencingToken, 0, 0);
        }

        /** Held by someone else, for {@code holderTtlMillis} more (0: unknown). */
        public static AcquireResult notAcquired(long holderTtlMillis, long fencingCounter) {
            return new AcquireResult(false, 0, 0, holderTtlMillis, fencingCounter);
        }

        /** Whether a fencing token came with the acquisition. */
        public boolean hasFencingToken() {
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
        /**
         * The store could not be asked; the lease may still be ours until it runs out.
         */
        FAILED

    }

}
