package io.github.distlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * Acquires distributed locks: only one holder at a time per key, across every JVM that shares
 * the Redis.
 *
 * <p>Every acquisition writes {@code SET <prefix>{key} <random token> NX PX <ttl>}; the returned
 * {@link LockHandle} owns the lock (not the calling thread), so any thread may release it. Unless
 * the watchdog is disabled, the lease is renewed every ttl/3 until the handle is released.
 *
 * <pre>{@code
 * try (LockHandle lock = lockService.lock("order:" + orderId, Duration.ofSeconds(30), Duration.ofSeconds(3))) {
 *     repository.markPaid(orderId, lock.fencingToken());
 * }
 *
 * Optional<LockHandle> maybe = lockService.tryLock("nightly-report", null, Duration.ZERO);
 * maybe.ifPresent(lock -> { try (lock) { report.run(); } });
 *
 * int stock = lockService.callLocked("stock:" + sku, null, null, () -> inventory.deduct(sku));
 * }</pre>
 *
 * <p>A {@code null} ttl or waitTime means the configured default
 * ({@code distributed-lock.default-ttl}, {@code distributed-lock.default-wait-time}). A waitTime of
 * zero tries exactly once.
 */
public interface LockService {

    /**
     * Tries to acquire the lock, waiting up to {@code waitTime} while another owner holds it.
     *
     * @param key the lock name as the application knows it, for example {@code "order:42"}; not blank
     * @param ttl how long the lease lasts if nothing renews it, or {@code null} for the default
     * @param waitTime how long to wait for another owner to let go, or {@code null} for the default
     * @return the handle, or empty if another owner still held the lock when the wait ran out
     * @throws LockBackendException if Redis is unreachable or answers with an error
     * @throws IllegalArgumentException if the key is blank, the ttl not from 1 ms to 36500 days or the wait
     *         negative or longer than 36500 days ({@link LockDurations})
     */
    default Optional<LockHandle> tryLock(String key, Duration ttl, Duration waitTime) {
        return tryLock(LockRequest.of(key).withTtl(ttl).withWaitTime(waitTime));
    }

    /**
     * Acquires the lock, waiting up to {@code waitTime}.
     *
     * @return the handle; release it with {@link LockHandle#release()} or try-with-resources
     * @throws LockTimeoutException if another owner still holds the lock after {@code waitTime}
     * @throws LockBackendException if Redis is unreachable or answers with an error
     */
    default LockHandle lock(String key, Duration ttl, Duration waitTime) {
        return lock(LockRequest.of(key).withTtl(ttl).withWaitTime(waitTime));
    }

    /**
     * Runs {@code action} while holding the lock and releases it afterwards, whether the action
     * returns or throws. The action's exception propagates unchanged.
     *
     * @throws LockTimeoutException if the lock is not acquired within {@code waitTime}; the action did not run
     * @throws LockBackendException if Redis is unreachable; the action did not run
     */
    default <T> T callLocked(String key, Duration ttl, Duration waitTime, Callable<T> action) throws Exception {
        return callLocked(LockRequest.of(key).withTtl(ttl).withWaitTime(waitTime), action);
    }

    /**
     * Tries to acquire the lock described by {@code request}; the general form of
     * {@link #tryLock(String, Duration, Duration)} that can also switch the watchdog per call.
     *
     * <pre>{@code
     * lockService.tryLock(LockRequest.of("export").withTtl(Duration.ofMinutes(5)).withWatchdog(false));
     * }</pre>
     */
    Optional<LockHandle> tryLock(LockRequest request);

    /**
     * Acquires the lock described by {@code request}, or throws {@link LockTimeoutException}.
     */
    LockHandle lock(LockRequest request);

    /**
     * Runs {@code action} under the lock described by {@code request}.
     */
    <T> T callLocked(LockRequest request, Callable<T> action) throws Exception;
}
