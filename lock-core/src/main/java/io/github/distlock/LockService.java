package io.github.distlock;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.jspecify.annotations.Nullable;

/**
 * Acquires distributed locks: only one holder at a time per key, across every JVM that
 * shares the Redis.
 *
 * <p>
 * Every acquisition writes {@code SET <prefix>{key} <random token> NX PX <ttl>}; the
 * returned {@link LockHandle} owns the lock (not the calling thread), so any thread may
 * release it. Unless the watchdog is disabled, the lease is renewed every ttl/3 until the
 * handle is released.
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
 *
 * try (MultiLockHandle locks = lockService.lockAll(List.of("account:" + from, "account:" + to), null, null)) {
 *     ledger.transfer(from, to, amount);
 * }
 * }</pre>
 *
 * <p>
 * A {@code null} ttl or waitTime means the configured default
 * ({@code distributed-lock.default-ttl}, {@code distributed-lock.default-wait-time}). A
 * waitTime of zero tries exactly once.
 */
public interface LockService {

    /**
     * Tries to acquire the lock, waiting up to {@code waitTime} while another owner holds
     * it.
     * @param key the lock name as the application knows it, for example
     * {@code "order:42"}; not blank
     * @param ttl how long the lease lasts if nothing renews it, or {@code null} for the
     * default
     * @param waitTime how long to wait for another owner to let go, or {@code null} for
     * the default
     * @return the handle, or empty if another owner still held the lock when the wait ran
     * out
     * @throws LockBackendException if Redis is unreachable or answers with an error
     * @throws InvalidLockKeyException (an {@link IllegalArgumentException}) if the key is
     * {@code null}, blank or longer than {@link #maxKeyLength()}
     * @throws IllegalArgumentException if the ttl is not from 1 ms to 36500 days or the
     * wait negative or longer than 36500 days ({@link LockDurations})
     */
    default Optional<LockHandle> tryLock(String key, @Nullable Duration ttl, @Nullable Duration waitTime) {
        return tryLock(LockRequest.of(key).withTtl(ttl).withWaitTime(waitTime));
    }

    /**
     * Acquires the lock, waiting up to {@code waitTime}.
     * @return the handle; release it with {@link LockHandle#release()} or
     * try-with-resources
     * @throws LockTimeoutException if another owner still holds the lock after
     * {@code waitTime}
     * @throws LockBackendException if Redis is unreachable or answers with an error
     */
    default LockHandle lock(String key, @Nullable Duration ttl, @Nullable Duration waitTime) {
        return lock(LockRequest.of(key).withTtl(ttl).withWaitTime(waitTime));
    }

    /**
     * Runs {@code action} while holding the lock and releases it afterwards, whether the
     * action returns or throws. The action's exception propagates unchanged.
     * @throws LockTimeoutException if the lock is not acquired within {@code waitTime};
     * the action did not run
     * @throws LockBackendException if Redis is unreachable; the action did not run
     */
    default <T extends @Nullable Object> T callLocked(String key, @Nullable Duration ttl, @Nullable Duration waitTime,
            Callable<T> action) throws Exception {
        return callLocked(LockRequest.of(key).withTtl(ttl).withWaitTime(waitTime), action);
    }

    /**
     * Tries to acquire the lock described by {@code request}; the general form of
     * {@link #tryLock(String, Duration, Duration)} that can also switch the watchdog per
     * call.
     *
     * <pre>{@code
     * lockService.tryLock(LockRequest.of("export").withTtl(Duration.ofMinutes(5)).withWatchdog(false));
     * }</pre>
     */
    Optional<LockHandle> tryLock(LockRequest request);

    /**
     * Acquires the lock described by {@code request}, or throws
     * {@link LockTimeoutException}.
     */
    LockHandle lock(LockRequest request);

    /**
     * Runs {@code action} under the lock described by {@code request}.
     */
    <T extends @Nullable Object> T callLocked(LockRequest request, Callable<T> action) throws Exception;

    /**
     * Acquires several locks, all or none: the way to guard work that touches several
     * resources, such as a transfer between two accounts. The keys are taken in sorted
     * order, whatever order they are given in, so two callers locking the same keys
     * cannot deadlock; a key given twice is locked once. One wait covers them all: later
     * keys get what is left of {@code waitTime}. If one cannot be had, those already
     * taken are released before this returns or throws.
     *
     * <pre>{@code
     * try (MultiLockHandle locks = lockService.lockAll(List.of("account:" + to, "account:" + from),
     *         Duration.ofSeconds(30), Duration.ofSeconds(2))) {
     *     ledger.transfer(from, to, amount);
     * }
     * }</pre>
     * @param keys the lock names; not empty, none blank
     * @param ttl the lease of each lock, or {@code null} for the default
     * @param waitTime how long to wait for all of them together, or {@code null} for the
     * default
     * @return the locks; release them together with {@link MultiLockHandle#release()} or
     * try-with-resources
     * @throws LockTimeoutException naming the first key that another owner still held
     * when the wait ran out
     * @throws LockBackendException if Redis is unreachable; none of the locks is held
     */
    default MultiLockHandle lockAll(Collection<String> keys, @Nullable Duration ttl, @Nullable Duration waitTime) {
        return lockAll(keys.stream().map(key -> LockRequest.of(key).withTtl(ttl).withWaitTime(waitTime)).toList());
    }

    /**
     * Like {@link #lockAll(Collection, Duration, Duration)}, but returns empty instead of
     * throwing when a lock is still held by another owner when the wait runs out.
     *
     * <pre>{@code
     * lockService.tryLockAll(List.of("sku:1", "sku:2"), null, Duration.ZERO)
     *         .ifPresent(locks -> { try (locks) { restock(); } });
     * }</pre>
     */
    default Optional<MultiLockHandle> tryLockAll(Collection<String> keys, @Nullable Duration ttl,
            @Nullable Duration waitTime) {
        return tryLockAll(keys.stream().map(key -> LockRequest.of(key).withTtl(ttl).withWaitTime(waitTime)).toList());
    }

    /**
     * Acquires several locks described by requests, all or none, in sorted key order; the
     * general form of {@link #lockAll(Collection, Duration, Duration)}, in which each key
     * may have its own ttl, watchdog or fencing token. The wait is shared: the longest
     * {@code waitTime} among the requests (a {@code null} one counts as
     * {@link #defaultWaitTime()}) bounds the whole acquisition. A key requested twice
     * with the same options is locked once; with different options, the call fails before
     * taking anything.
     *
     * <pre>{@code
     * lockService.lockAll(List.of(
     *         LockRequest.of("ledger:" + id).withFencingToken(),
     *         LockRequest.of("audit:" + id).withWatchdog(false)));
     * }</pre>
     * @throws LockTimeoutException naming the first key that another owner still held
     * when the wait ran out
     * @throws LockBackendException if Redis is unreachable; none of the locks is held
     * @throws InvalidLockKeyException if a key is {@code null}, blank or longer than
     * {@link #maxKeyLength()}; nothing is taken then
     * @throws IllegalArgumentException if there is no request, or a key is requested with
     * two sets of options
     */
    default MultiLockHandle lockAll(List<LockRequest> requests) {
        return MultiKeyAcquisition.acquire(this, requests, true);
    }

    /**
     * Like {@link #lockAll(List)}, but returns empty instead of throwing
     * {@link LockTimeoutException}.
     */
    default Optional<MultiLockHandle> tryLockAll(List<LockRequest> requests) {
        return Optional.ofNullable(MultiKeyAcquisition.acquire(this, requests, false));
    }

    /**
     * The longest key this service accepts, in characters of the key as given (before the
     * prefix): {@code distributed-lock.max-key-length} for the built-in service. A longer
     * key fails with {@link InvalidLockKeyException} before anything is sent, and
     * {@link #lockAll(List)} checks every key before it takes the first. This default
     * implementation sets no limit; an implementation with one overrides it.
     *
     * <pre>{@code
     * String key = "import:" + fileName;
     * if (key.length() > lockService.maxKeyLength()) {
     *     key = "import:" + sha256(fileName);
     * }
     * }</pre>
     */
    default int maxKeyLength() {
        return Integer.MAX_VALUE;
    }

    /**
     * Whether this service's store can shorten and set a held lock's lease on its own
     * token: what a minimum hold ({@link LockRequest#withMinHold}) and
     * {@link LockHandle#extend} need. True for the built-in service on Redis, on a
     * Redlock of Redis nodes and on the in-memory backend; false on a custom backend that
     * cannot, where a request with a minimum hold fails before anything is sent.
     *
     * <pre>{@code
     * LockRequest request = LockRequest.of("nightly-report").withWaitTime(Duration.ZERO);
     * if (lockService.supportsMinHold()) {
     *     request = request.withMinHold(Duration.ofMinutes(1));
     * }
     * }</pre> This default implementation returns {@code false}.
     */
    default boolean supportsMinHold() {
        return false;
    }

    /**
     * The wait time a request without one gets
     * ({@code distributed-lock.default-wait-time} for the built-in service).
     * {@link #lockAll(List)} shares it among the keys. This default implementation
     * returns zero (try once); an implementation with a different default overrides it.
     */
    default Duration defaultWaitTime() {
        return Duration.ZERO;
    }

}
