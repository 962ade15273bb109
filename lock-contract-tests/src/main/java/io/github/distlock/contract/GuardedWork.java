package io.github.distlock.contract;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.github.distlock.DistributedLock;

/**
 * Service methods guarded by {@code @DistributedLock}, the way applications use the
 * starter. Each runs the work it is given, so a test decides what happens under the lock;
 * a call from that work to another method of this bean goes through the proxy, as a call
 * from another bean would.
 */
public class GuardedWork {

    /** Waits up to 30 s for the lock on {@code key}. */
    @DistributedLock(key = "#key", waitTime = "30s")
    public <T> T run(String key, Supplier<T> work) {
        return work.get();
    }

    /** Tries the lock on {@code key} once. */
    @DistributedLock(key = "#key", waitTime = "0s")
    public <T> T tryRun(String key, Supplier<T> work) {
        return work.get();
    }

    /**
     * A short lease that the watchdog renews, so that a loss is noticed within a fraction
     * of a second.
     */
    @DistributedLock(key = "#key", ttl = "900ms", waitTime = "0s", watchdog = DistributedLock.Watchdog.ENABLED)
    public <T> T runWithShortLease(String key, Supplier<T> work) {
        return work.get();
    }

    /** A fixed 500 ms lease: nothing renews it while the method runs. */
    @DistributedLock(key = "#key", ttl = "500ms", waitTime = "0s", watchdog = DistributedLock.Watchdog.DISABLED)
    public <T> T runWithFixedLease(String key, Supplier<T> work) {
        return work.get();
    }

    /**
     * Like {@link #runWithShortLease}, but a lost lease interrupts the thread running the
     * method.
     */
    @DistributedLock(key = "#key", ttl = "900ms", waitTime = "0s", watchdog = DistributedLock.Watchdog.ENABLED,
            onLeaseLost = DistributedLock.LeaseLostAction.INTERRUPT)
    public <T> T runInterruptedOnLoss(String key, Supplier<T> work) {
        return work.get();
    }

    /**
     * Holds the lock on {@code key} until the returned stage completes, not only until
     * the method returns.
     */
    @DistributedLock(key = "#key", waitTime = "0s")
    public <T> CompletableFuture<T> runUntilDone(String key, Supplier<CompletableFuture<T>> work) {
        return work.get();
    }

    /** {@link #runUntilDone} with a short lease that the watchdog renews. */
    @DistributedLock(key = "#key", ttl = "900ms", waitTime = "0s", watchdog = DistributedLock.Watchdog.ENABLED)
    public <T> CompletableFuture<T> runUntilDoneWithShortLease(String key, Supplier<CompletableFuture<T>> work) {
        return work.get();
    }

    /** Both keys or neither, waiting at most 300 ms for both together. */
    @DistributedLock(keys = { "#first", "#second" }, waitTime = "300ms")
    public <T> T runOnBoth(String first, String second, Supplier<T> work) {
        return work.get();
    }

    /** Both keys or neither, waiting up to 30 s. */
    @DistributedLock(keys = { "#first", "#second" }, waitTime = "30s")
    public <T> T runOnBothPatiently(String first, String second, Supplier<T> work) {
        return work.get();
    }

}
