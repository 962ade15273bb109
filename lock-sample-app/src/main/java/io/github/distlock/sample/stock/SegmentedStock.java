package io.github.distlock.sample.stock;

import java.time.Duration;
import java.util.Optional;

import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.segment.SegmentedLock;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ValueOperations;

/**
 * The stock of one SKU split into segments, each with its own lock, the way
 * {@code ConcurrentHashMap} (up to Java 7) split its table: requests for a hot item then
 * serialise per segment instead of on one lock, and up to {@code segments} of them sell
 * at the same time. The read-check-write per segment is the same non-atomic code as
 * {@link StockService}'s, so each segment still needs its lock.
 *
 * <p>
 * The library's {@link SegmentedLock} picks the segment: from a random start, a free
 * segment with stock left, queueing only when every such segment is busy, so the segments
 * drain evenly and the SKU is sold out only when every segment is. With one segment this
 * is exactly one lock per SKU.
 *
 * <p>
 * Keys: {@code segmented-stock:<sku>:<segment>} holds a segment's units,
 * {@code segmented-sold:<sku>} counts the units sold (an atomic {@code INCR}); the lock
 * of a segment is {@code segmented-stock:<sku>#<segment>}.
 */
public class SegmentedStock {

    private final LockService locks;

    private final StringRedisTemplate redis;

    private final int segments;

    private final Duration workDelay;

    private final Duration lockWait;

    /**
     * @param locks the lock service
     * @param redis where the stock lives
     * @param segments how many segments (and locks) the stock is split into; 1 is a
     * single lock
     * @param workDelay the work between reading and writing a segment, as in
     * {@link StockService}
     * @param lockWait how long a request waits for a segment's lock
     */
    public SegmentedStock(LockService locks, StringRedisTemplate redis, int segments, Duration workDelay,
            Duration lockWait) {
        if (segments < 1) {
            throw new IllegalArgumentException("segments must be at least 1, was " + segments);
        }
        this.locks = locks;
        this.redis = redis;
        this.segments = segments;
        this.workDelay = workDelay;
        this.lockWait = lockWait;
    }

    /** The number of segments. */
    public int segments() {
        return segments;
    }

    /**
     * Spreads {@code quantity} units over the segments as evenly as possible and zeroes
     * the sales. Not locked: call it before any sale runs.
     */
    public StockLevel reset(String sku, long quantity) {
        ValueOperations<String, String> values = redis.opsForValue();
        for (int segment = 0; segment < segments; segment++) {
            long share = quantity / segments + (segment < quantity % segments ? 1 : 0);
            values.set(segmentKey(sku, segment), Long.toString(share));
        }
        values.set(soldKey(sku), "0");
        return new StockLevel(sku, quantity, 0);
    }

    /**
     * Sells one unit from a segment that has stock left, holding that segment's lock.
     * @return whether a unit was sold; {@code false} means every segment was empty
     * @throws io.github.distlock.LockTimeoutException if a segment's lock stayed busy for
     * the wait time
     */
    public Deduction deduct(String sku) {
        ValueOperations<String, String> values = redis.opsForValue();
        SegmentedLock lock = new SegmentedLock(locks, LockRequest.of("segmented-stock:" + sku).withWaitTime(lockWait),
                segments);
        try {
            // The predicate, read without the lock, only skips segments that are already
            // empty; the decision to
            // sell is taken again under the segment's lock.
            return lock.callOnSegment(segment -> StockValues.parse(values.get(segmentKey(sku, segment))) > 0,
                    (segment, held) -> {
                        long stock = StockValues.parse(values.get(segmentKey(sku, segment)));
                        if (stock <= 0) {
                            return Optional.empty(); // emptied while we waited for its
                                                     // lock: try another segment
                        }
                        StockValues.pause(workDelay);
                        values.set(segmentKey(sku, segment), Long.toString(stock - 1));
                        values.increment(soldKey(sku));
                        return Optional.of(new Deduction(sku, true, stock - 1));
                    })
                .orElseGet(() -> new Deduction(sku, false, 0));
        }
        catch (RuntimeException e) {
            throw e;
        }
        catch (Exception e) {
            // The work above throws no checked exception; callOnSegment's signature
            // allows work that does.
            throw new IllegalStateException(e);
        }
    }

    /** The units left over all segments and the units sold. */
    public StockLevel level(String sku) {
        ValueOperations<String, String> values = redis.opsForValue();
        long stock = 0;
        for (int segment = 0; segment < segments; segment++) {
            stock += StockValues.parse(values.get(segmentKey(sku, segment)));
        }
        return new StockLevel(sku, stock, StockValues.parse(values.get(soldKey(sku))));
    }

    private static String segmentKey(String sku, int segment) {
        return "segmented-stock:" + sku + ":" + segment;
    }

    private static String soldKey(String sku) {
        return "segmented-sold:" + sku;
    }

}
