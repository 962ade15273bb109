package io.github.distlock.contract;

import java.util.List;
import java.util.Set;

/**
 * The store a backend under contract keeps its locks in, as the suite needs it: how an
 * application instance is set up to use it, and a side door that reads and changes a
 * lock's state behind the application's back. Everything the suite knows of a store's
 * layout is here; the tests themselves go through the public API only.
 *
 * <p>
 * Implementations: {@link RedisContractStore} (standalone, Cluster, Sentinel, Redlock
 * over {@link ContractRedis}), and {@link InMemoryContractStore} for the in-memory
 * backend.
 */
public interface ContractStore extends AutoCloseable {

    /**
     * Properties every application instance gets, as {@code name=value}: how it connects
     * to the store.
     */
    List<String> applicationProperties();

    /**
     * Configuration classes every application instance gets, e.g. one declaring the
     * store's backend bean.
     */
    default Class<?>[] applicationSources() {
        return new Class<?>[0];
    }

    /** Whether the store holds lock {@code name} now. */
    boolean isHeld(String name);

    /**
     * The lease left on lock {@code name} in ms, as Redis's {@code PTTL} reports it:
     * {@code -2} when it is free.
     */
    long leaseLeftMillis(String name);

    /**
     * Takes lock {@code name} from its holder, as an operator or an expiry would; fails
     * if it was not held.
     */
    void takeAway(String name);

    /**
     * Entries in the wait queue of lock {@code name}, for stores with
     * {@link Capability#WAIT_QUEUE}.
     */
    long queueLength(String name);

    /**
     * What lock {@code name} left in the store other than a fencing counter meant to
     * outlive it: a lock, a queue, a queue entry. Empty once every holder and waiter is
     * done.
     */
    Set<String> leftovers(String name);

    /**
     * Drops the fencing counter of lock {@code name}, which must be free, as eviction or
     * the counter's own expiry would. Fails if the store should keep one and has none.
     */
    void evictFencingCounter(String name);

    /**
     * Readies the store for the next test: resumes anything paused and forgets every
     * lock.
     */
    void reset();

    @Override
    void close();

}
