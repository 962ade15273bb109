package io.github.distlock.core;

/**
 * Lock contexts for {@code ListenerCostBenchmark}, which drives the listener seam without
 * Redis. In the starter's package because {@link LockContext}'s constructor is
 * package-private: only the lock service makes them, and this benchmark must not need a
 * public constructor that applications could misuse.
 */
public final class BenchLockContexts {

    private BenchLockContexts() {
    }

    /**
     * A fresh context, as {@link DefaultLockService} makes one per call.
     *
     * <pre>{@code
     * LockContext lock = BenchLockContexts.newContext("orders", "order:1");
     * }</pre>
     * @param name the lock name (the {@code lock.name} tag)
     * @param key the per-call key
     * @return a context that has not been acquired yet
     */
    public static LockContext newContext(String name, String key) {
        return new LockContext(new LockKey(key, "lock:{" + key + "}"), name, 30_000, true, System.nanoTime());
    }

}
