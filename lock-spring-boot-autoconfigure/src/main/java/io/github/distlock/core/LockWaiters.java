package io.github.distlock.core;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The threads of this JVM that wait for a lock, by the token they asked for it with, and the
 * hand-over each one waits for.
 *
 * <p>A release hands the lock to the longest-waiting live waiter in Redis and announces it on the
 * one subscription of this JVM ({@link #handedOver(String, long)}); only that waiter wakes up, and
 * it already owns the lock. Entries exist only while someone waits, so the registry is empty again
 * once the waits are over, however many distinct keys were waited on.
 *
 * <p>Waiters park with {@link LockSupport} rather than {@code Object.wait}, so a waiting virtual
 * thread does not pin its carrier.
 */
public final class LockWaiters {

    private final ConcurrentHashMap<String, Waiter> byToken = new ConcurrentHashMap<>();
    private volatile BooleanSupplier notificationsActive = () -> false;
    private volatile BooleanSupplier notificationsDelivered = () -> false;

    /**
     * Tells the registry how to know whether hand-over messages are currently being delivered.
     * While they are not, waiters poll with a short backoff instead of trusting the wake-up.
     *
     * @param active asked when a thread is about to wait; may start the delivery (a subscription)
     *        and answer {@code false} until it runs
     * @param delivered asked before every attempt of a waiting thread; must not start anything, so
     *        that locks nobody waits for never open a subscription
     */
    public void notificationsFrom(BooleanSupplier active, BooleanSupplier delivered) {
        this.notificationsActive = active;
        this.notificationsDelivered = delivered;
    }

    /** Whether hand-over messages are being delivered now; may start their delivery. */
    public boolean notificationsActive() {
        return notificationsActive.getAsBoolean();
    }

    /** Whether hand-over messages are being delivered now, without starting anything. */
    public boolean notificationsDelivered() {
        return notificationsDelivered.getAsBoolean();
    }

    /**
     * A release handed a lock to the waiter that asked with {@code token}: wakes it, if it is one of
     * ours and still waiting. Hand-overs to waiters of other JVMs are ignored.
     *
     * @param token the waiter's token, now the lock's value in Redis
     * @param fencingToken the fencing token of the handed-over lock
     */
    public void handedOver(String token, long fencingToken) {
        Waiter waiter = byToken.get(token);
        if (waiter != null) {
            waiter.handOver(fencingToken);
        }
    }

    /** The number of threads of this JVM waiting for a lock right now. */
    public int waiting() {
        return byToken.size();
    }

    Waiter enter(String token) {
        Waiter waiter = new Waiter(token, Thread.currentThread());
        byToken.put(token, waiter);
        return waiter;
    }

    void leave(Waiter waiter) {
        byToken.remove(waiter.token, waiter);
    }

    /** One waiting thread. */
    static final class Waiter {

        private final String token;
        private final Thread thread;
        private volatile long fencingToken;

        Waiter(String token, Thread thread) {
            this.token = token;
            this.thread = thread;
        }

        /**
         * Parks until the lock is handed over, {@code nanos} pass or the thread is interrupted. A
         * hand-over that arrived before this call returns at once, so none is missed.
         *
         * @return the fencing token if the lock was handed over to us, otherwise 0
         */
        long await(long nanos) {
            long deadline = System.nanoTime() + nanos;
            long remaining = nanos;
            while (fencingToken == 0 && remaining > 0 && !thread.isInterrupted()) {
                LockSupport.parkNanos(this, remaining);
                remaining = deadline - System.nanoTime();
            }
            return fencingToken;
        }

        private void handOver(long fencingToken) {
            this.fencingToken = fencingToken;
            LockSupport.unpark(thread);
        }
    }
}
