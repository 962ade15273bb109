package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Everything an application does with a lock, against one Redis, for tests that change
 * how the application reaches Redis (ACL user, TLS): an uncontended acquisition, its
 * fencing token, a waiter that gives up, watchdog renewals, a contended wait that ends
 * with a hand-over, release. Redis state is checked through the fixture, by the keys
 * under the default prefix {@code lock:}.
 */
final class LockLifecycle {

    /**
     * Short, so the watchdog renews it several times; long enough that a stall of a busy
     * machine is no loss.
     */
    private static final Duration TTL = Duration.ofMillis(1000);

    private LockLifecycle() {
    }

    /**
     * Runs the lifecycle on lock {@code name}.
     * @param holder takes the lock first
     * @param waiter contends for it, from another instance or the same one
     */
    static void run(String name, LockService holder, LockService waiter, RedisTestServer redis) throws Exception {
        // Connected first: a cold connection (through Sentinel, on a busy machine) can
        // take longer
        // than the short lease below, and a lease over before the call returns is given
        // back.
        // Only not having connected yet is waited out: any other answer (an ACL denial,
        // say) ends the
        // warm-up at once and fails the run, as it would without one.
        for (LockService service : List.of(holder, waiter)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                try {
                    return service
                        .tryLock(LockRequest.of(name + ":warm-up")
                            .withTtl(Duration.ofSeconds(5))
                            .withWaitTime(Duration.ZERO))
                        .map(LockHandle::release)
                        .orElse(false);
                }
                catch (LockBackendException ex) {
                    String message = String.valueOf(ex.getMessage());
                    if (message.startsWith("Could not connect") || message.startsWith("Redis did not answer")) {
                        return false;
                    }
                    throw ex;
                }
            });
        }
        LockHandle held = holder
            .tryLock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withWatchdog(true))
            .orElseThrow();
        assertThat(held.fencingToken()).isPositive();
        assertThat(waiter.tryLock(LockRequest.of(name).withWaitTime(Duration.ofMillis(100))))
            .as("a waiter that gives up")
            .isEmpty();

        long heldSince = System.nanoTime();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
            assertThat(held.isHeld()).as("held, the watchdog renewing it").isTrue();
            assertThat(leaseKeys(redis)).as("lease keys").hasSize(1);
            return System.nanoTime() - heldSince > TTL.multipliedBy(2).toNanos();
        });

        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<LockHandle> next = pool
                .submit(() -> waiter.lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ofSeconds(10))));
            // Give the waiter time to queue; the lock must reach it whether or not it
            // had.
            await().pollDelay(Duration.ofMillis(100)).until(() -> true);
            assertThat(held.release()).isTrue();
            LockHandle handedOver = next.get(15, TimeUnit.SECONDS);
            assertThat(handedOver.fencingToken()).isGreaterThan(held.fencingToken());
            assertThat(handedOver.release()).isTrue();
        }
        finally {
            pool.shutdownNow();
        }
        assertThat(leaseKeys(redis)).as("nothing held").isEmpty();
    }

    /**
     * Keys under {@code lock:} with a lease of at most the lifecycle's ttl: the held
     * lock's key.
     */
    private static List<String> leaseKeys(RedisTestServer redis) {
        List<String> keys = redis.scan("lock:*");
        Map<String, Long> pttls = redis.pttls(keys);
        return keys.stream().filter(key -> pttls.get(key) > 0 && pttls.get(key) <= TTL.toMillis()).toList();
    }

}
