package io.github.distlock.benchmarks.adapter;

/**
 * One client of one lock implementation, reduced to what every scenario does: take the
 * lock, run a critical section, let go.
 *
 * <p>
 * A callback rather than lock/unlock methods, because {@code @DistributedLock} can only
 * be driven that way, and because it keeps each implementation's release in its own
 * {@code finally}. Thread-safe: several threads may share one adapter (one client per
 * application) or each open its own (separate application instances).
 */
public interface LockAdapter extends AutoCloseable {

    /**
     * Acquires the lock on {@code key}, waiting up to the wait time the adapter was
     * opened with, runs {@code criticalSection} while holding it and releases it, also
     * when the section throws.
     * @param key the lock name; each implementation stores it under its own prefix
     * @param criticalSection the work to protect
     * @throws LockNotAcquiredException if another owner still held the lock when the wait
     * ran out
     */
    void runLocked(String key, Runnable criticalSection);

    /** Closes the client and its connections. */
    @Override
    void close();

}
