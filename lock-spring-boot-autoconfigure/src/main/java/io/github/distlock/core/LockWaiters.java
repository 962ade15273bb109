package io.github.distlock.core;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The threads of this JVM that wait for a lock, by lock name, and the wake-up call they wait for.
 *
 * <p>One subscription per JVM delivers every "released" message here ({@link #released(String)});
 * only waiters of that key wake up. Entries exist only while someone waits, so the registry is
 * empty again once the waits are over, however many distinct keys were waited on.
 *
 * <p>Waiters park with {@link LockSupport} rather than {@code Object.wait}, so a waiting virtual
 * thread does not pin its carrier.
 */
public final class LockWaiters {

    private final ConcurrentHashMap<String, Waiting> byKey = new ConcurrentHashMap<>();
    private volatile BooleanSupplier notificationsActive = () -> false;

    /**
     * Tells the registry how to know whether release messages are currently being delivered. While
     * they are not, waiters poll with a short backoff instead of trusting the wake-up.
     */
    public void notificationsFrom(BooleanSupplier active) {
        this.notificationsActive = active;
    }

    /** Whether release messages are being delivered now. */
    public boolean notificationsActive() {
        return notificationsActive.getAsBoolean();
    }

    /** Wakes every local waiter of {@code key}: its lock was just released. */
    public void released(String key) {
        Waiting waiting = byKey.get(key);
        if (waiting != null) {
            waiting.signal();
        }
    }

    /** The number of keys that local threads are waiting on right now. */
    public int waitingKeys() {
        return byKey.size();
    }

    Waiting enter(String key) {
        return byKey.compute(key, (k, existing) -> {
            Waiting waiting = existing != null ? existing : new Waiting(k);
            waiting.parties++;
            return waiting;
        });
    }

    void leave(Waiting waiting) {
        byKey.computeIfPresent(waiting.key, (k, existing) -> --existing.parties == 0 ? null : existing);
    }

    /** The waiters of one key. {@code parties} is only touched inside the map's compute functions. */
    static final class Waiting {

        private final String key;
        private final AtomicLong releases = new AtomicLong();
        private final Set<Thread> parked = ConcurrentHashMap.newKeySet();
        private int parties;

        Waiting(String key) {
            this.key = key;
        }

        /** A snapshot to compare against: take it before the attempt whose failure makes us wait. */
        long releasesSeen() {
            return releases.get();
        }

        /**
         * Parks until a release newer than {@code seen} arrives or {@code nanos} pass. A release
         * that arrived between the snapshot and this call returns at once, so none is missed.
         */
        void await(long seen, long nanos) {
            Thread current = Thread.currentThread();
            parked.add(current);
            try {
                long deadline = System.nanoTime() + nanos;
                long remaining = nanos;
                while (releases.get() == seen && remaining > 0 && !current.isInterrupted()) {
                    LockSupport.parkNanos(this, remaining);
                    remaining = deadline - System.nanoTime();
                }
            }
            finally {
                parked.remove(current);
            }
        }

        private void signal() {
            releases.incrementAndGet();
            for (Thread thread : parked) {
                LockSupport.unpark(thread);
            }
        }
    }
}
