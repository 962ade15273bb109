package io.github.distlock.sample.stock;

import java.time.Duration;

import io.github.distlock.DistributedLock;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ValueOperations;
import org.springframework.stereotype.Service;

/**
 * Keeps the stock of each SKU in Redis and sells units one at a time.
 *
 * <p>
 * The deduction is deliberately written the way it often is in real code: read the stock,
 * check it, do some work, write the new value. Between the read and the write another
 * request, possibly on another instance, can read the same value; both then write
 * {@code stock - 1} and one sale is not subtracted. {@link #deduct(String)} runs that
 * code under a distributed lock per SKU; {@link #deductUnguarded(String)} runs the very
 * same code without it, for comparison.
 *
 * <p>
 * Keys: {@code stock:<sku>} holds the units left and {@code sold:<sku>} counts the units
 * sold with {@code INCR}, which is atomic and therefore exact even when the stock counter
 * is not.
 */
@Service
public class StockService {

    private final StringRedisTemplate redis;

    private final Duration workDelay;

    /**
     * @param redis plain string commands, so that the values are readable with redis-cli
     * @param workDelay how long the work between reading and writing the stock takes
     * ({@code sample.stock.work-delay})
     */
    public StockService(StringRedisTemplate redis, @Value("${sample.stock.work-delay:2ms}") Duration workDelay) {
        this.redis = redis;
        this.workDelay = workDelay;
    }

    /**
     * Sells one unit of {@code sku} while holding the lock {@code stock:<sku>}, so that
     * the read-modify-write below runs for one request at a time across every instance.
     * @return whether a unit was sold and the stock left
     * @throws io.github.distlock.LockTimeoutException if another request held the lock
     * for longer than {@code sample.stock.lock-wait-time}; nothing was sold
     * @throws io.github.distlock.LockBackendException if Redis could not be reached
     */
    @DistributedLock(key = "'stock:' + #sku", ttl = "${sample.stock.lock-ttl}",
            waitTime = "${sample.stock.lock-wait-time}")
    public Deduction deduct(String sku) {
        return readCheckWrite(sku);
    }

    /**
     * Sells one unit of {@code sku} with exactly the same code as {@link #deduct(String)}
     * but without the lock: under concurrency this oversells. Exists only to show the
     * problem.
     */
    public Deduction deductUnguarded(String sku) {
        return readCheckWrite(sku);
    }

    /**
     * Sets the stock of {@code sku} and zeroes its sales counter. Takes the same lock as
     * {@link #deduct(String)} so that a reset never interleaves with a guarded sale.
     * @param quantity the new stock, not negative
     */
    @DistributedLock(key = "'stock:' + #sku", ttl = "${sample.stock.lock-ttl}",
            waitTime = "${sample.stock.lock-wait-time}")
    public StockLevel reset(String sku, long quantity) {
        if (quantity < 0) {
            throw new IllegalArgumentException("quantity must not be negative: " + quantity);
        }
        ValueOperations<String, String> values = redis.opsForValue();
        values.set(stockKey(sku), Long.toString(quantity));
        values.set(soldKey(sku), "0");
        return new StockLevel(sku, quantity, 0);
    }

    /** The current stock and sales of {@code sku}; zero for an SKU that was never set. */
    public StockLevel level(String sku) {
        ValueOperations<String, String> values = redis.opsForValue();
        return new StockLevel(sku, StockValues.parse(values.get(stockKey(sku))),
                StockValues.parse(values.get(soldKey(sku))));
    }

    private Deduction readCheckWrite(String sku) {
        ValueOperations<String, String> values = redis.opsForValue();
        long stock = StockValues.parse(values.get(stockKey(sku)));
        if (stock <= 0) {
            return new Deduction(sku, false, stock);
        }
        // Stands for the work a real service does between reading and writing (pricing, a
        // payment
        // call, an order row). It is what makes the race likely rather than merely
        // possible.
        StockValues.pause(workDelay);
        values.set(stockKey(sku), Long.toString(stock - 1));
        values.increment(soldKey(sku));
        return new Deduction(sku, true, stock - 1);
    }

    static String stockKey(String sku) {
        return "stock:" + sku;
    }

    static String soldKey(String sku) {
        return "sold:" + sku;
    }

}
