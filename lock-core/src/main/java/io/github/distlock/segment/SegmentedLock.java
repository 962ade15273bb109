package io.github.distlock.segment;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntPredicate;

import org.jspecify.annotations.Nullable;

import io.github.distlock.LockHandle;
import io.github.distlock.LockKeys;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;

/**
 * One lock per segment of a resource that is split the way {@code ConcurrentHashMap}
 * split its table up to Java 7: the stock of a hot item in N counters instead of one, a
 * budget in N shares. Requests then serialise per segment instead of on one lock, so up
 * to N of them run at once, and each segment is still changed by one holder at a time.
 *
 * <p>
 * {@link #callOnSegment} finds a segment for the caller: it starts at a random segment
 * (so callers spread evenly), skips the segments the caller's predicate says are empty
 * without locking them, takes the first one whose lock is free, and waits only when every
 * segment that may have capacity is busy. The work runs under the segment's lock and
 * re-checks the capacity there: the predicate is only a hint. A segment whose work found
 * it empty is not tried again in that call, so the call ends with a result, an empty
 * {@code Optional} when every segment is empty, or a {@link LockTimeoutException}.
 *
 * <pre>{@code
 * SegmentedLock segments = new SegmentedLock(lockService,
 *         LockRequest.of("stock:" + sku).withWaitTime(Duration.ofSeconds(2)), 8);
 * Optional<Long> left = segments.callOnSegment(
 *         segment -> stock.get(sku, segment) > 0,            // hint, read without the lock
 *         (segment, lock) -> {
 *             long units = stock.get(sku, segment);           // decided under the segment's lock
 *             if (units == 0) {
 *                 return Optional.empty();                    // emptied meanwhile: try another segment
 *             }
 *             stock.set(sku, segment, units - 1);
 *             return Optional.of(units - 1);
 *         });
 * if (left.isEmpty()) {
 *     throw new SoldOutException(sku);                        // every segment is empty
 * }
 * }</pre>
 *
 * <p>
 * Segment {@code i}'s lock is {@code <key>#<i>}, an ordinary lock of the
 * {@link LockService}: in a Redis Cluster the segments land in different slots.
 * Thread-safe; keep one per resource or create one per call, it holds no state between
 * calls.
 */
public final class SegmentedLock {

    private final LockService locks;

    private final LockRequest request;

    private final int segments;

    /**
     * @param locks the lock service that takes each segment's lock
     * @param request the resource's key, and the ttl, wait time and watchdog for every
     * segment's lock; the wait time bounds the whole {@link #callOnSegment} call
     * ({@code null}: each wait for a busy segment lasts up to
     * {@code distributed-lock.default-wait-time})
     * @param segments how many segments the resource has, at least 1
     * @throws IllegalArgumentException if {@code segments} is less than 1
     * @throws io.github.distlock.InvalidLockKeyException if the key is null or blank, or
     * the longest segment key ({@code <key>#<segments - 1>}) is longer than the service's
     * {@link LockService#maxKeyLength()}
     */
    public SegmentedLock(LockService locks, LockRequest request, int segments) {
        this.locks = Objects.requireNonNull(locks, "locks");
        this.request = Objects.requireNonNull(request, "request");
        if (segments < 1) {
            throw new IllegalArgumentException(
                    "A SegmentedLock on '" + request.key() + "' needs at least 1 segment, " + "was " + segments
                            + "; use 1 for a single lock, or the number of segments the resource is split into.");
        }
        this.segments = segments;
        // Checked here rather than on the first call: " #0" would pass as a key, and a
        // key that is too long
        // fails every call alike.
        LockKeys.requireValid(request.key(), locks.maxKeyLength(), "The key of this SegmentedLock");
        LockKeys.requireValid(key(segments - 1), locks.maxKeyLength(),
                "The key of segment " + (segments - 1) + " of this SegmentedLock");
    }

    /** The number of segments. */
    public int segments() {
        return segments;
    }

    /**
     * The lock key of {@code segment}: {@code <key>#<segment>}.
     * @throws IndexOutOfBoundsException if there is no such segment
     */
    public String key(int segment) {
        Objects.checkIndex(segment, segments);
        return request.key() + "#" + segment;
    }

    /**
     * Runs {@code work} under the lock of one segment that has capacity, and releases
     * that lock.
     * @param mayHaveCapacity whether a segment is worth trying, read without its lock
     * (for example {@code stock > 0}); a segment it rejects is neither locked nor tried
     * again in this call
     * @param work the work on one segment, run while its lock is held; returns a result,
     * or empty if the segment turned out to have no capacity (another segment is tried
     * then). Never {@code null}.
     * @return the work's result, or empty if no segment had capacity
     * @throws LockTimeoutException if segments that may have capacity stayed busy for the
     * request's wait time
     * @throws io.github.distlock.LockBackendException if Redis could not be reached
     * @throws Exception whatever {@code work} throws, unchanged; the segment's lock is
     * released first
     */
    public <T> Optional<T> callOnSegment(IntPredicate mayHaveCapacity, SegmentWork<T> work) throws Exception {
        long started = System.nanoTime();
        boolean[] done = new boolean[segments];
        while (true) {
            int start = ThreadLocalRandom.current().nextInt(segments);
            int busy = -1;
            // First every segment that may have capacity, without waiting: a free one is
            // better than a queue.
            for (int i = 0; i < segments; i++) {
                int segment = (start + i) % segments;
                if (done[segment] || !mayHaveCapacity.test(segment)) {
                    done[segment] = true;
                    continue;
                }
                Optional<LockHandle> free = locks.tryLock(segmentRequest(segment, Duration.ZERO));
                if (free.isEmpty()) {
                    busy = busy < 0 ? segment : busy;
                    continue;
                }
                Optional<T> result = run(segment, free.get(), work);
                if (result.isPresent()) {
                    return result;
                }
                done[segment] = true;
            }
            if (busy < 0) {
                return Optional.empty();
            }
            // Every segment that may have capacity is busy: queue for one of them, within
            // what is left of the wait.
            Duration wait = remainingWait(started);
            if (wait != null && wait.isNegative()) {
                throw timeout(busy, started);
            }
            Optional<LockHandle> waited = locks.tryLock(segmentRequest(busy, wait));
            if (waited.isEmpty()) {
                throw timeout(busy, started);
            }
            Optional<T> result = run(busy, waited.get(), work);
            if (result.isPresent()) {
                return result;
            }
            done[busy] = true;
        }
    }

    private <T> Optional<T> run(int segment, LockHandle lock, SegmentWork<T> work) throws Exception {
        try (lock) {
            return Objects.requireNonNull(work.call(segment, lock), () -> "The work on segment " + key(segment)
                    + " returned null; return Optional.empty() when the segment has no capacity");
        }
    }

    private LockTimeoutException timeout(int segment, long started) {
        // With the default wait time the exception reports how long this call actually
        // waited.
        return new LockTimeoutException(key(segment),
                request.waitTime() != null ? request.waitTime() : Duration.ofNanos(System.nanoTime() - started));
    }

    private LockRequest segmentRequest(int segment, @Nullable Duration waitTime) {
        // Each segment on the request's backend, with its minimum hold and expiry
        // reporting.
        return new LockRequest(key(segment), request.ttl(), waitTime, request.watchdog(), request.fencingToken(),
                request.name(), null, request.minHold(), request.backend(), request.expiryReported());
    }

    /**
     * What is left of the request's wait time, or {@code null} for the configured
     * default.
     */
    private @Nullable Duration remainingWait(long started) {
        if (request.waitTime() == null) {
            return null;
        }
        return request.waitTime().minusNanos(System.nanoTime() - started);
    }

    /**
     * The work on one segment, under that segment's lock.
     *
     * @param <T> the work's result
     */
    @FunctionalInterface
    public interface SegmentWork<T> {

        /**
         * @param segment the segment, from 0 to {@code segments - 1}
         * @param lock the segment's lock, held for the duration of the call (its fencing
         * token orders this segment's holders)
         * @return the result, or empty if the segment has no capacity after all
         */
        Optional<T> call(int segment, LockHandle lock) throws Exception;

    }

}
