package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.distlock.DistributedLock;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * Two application instances (separate contexts, each with its own Redis connection
 * factory) hammer a non-atomic read-modify-write on a Redis counter. Under
 * {@code @DistributedLock} no increment is lost; the unguarded twin loses some, which
 * shows the test would notice a lock that does not exclude.
 */
class DistributedLockContentionTest {

    private static final int THREADS_PER_INSTANCE = 8;

    private static final int CALLS_PER_THREAD = 10;

    private static final int TOTAL_CALLS = 2 * THREADS_PER_INSTANCE * CALLS_PER_THREAD;

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private final ApplicationContextRunner instance = LockTestContexts.runner(redis.server())
        .withBean(CounterService.class);

    @Test
    void guardedReadModifyWriteLosesNoUpdateAcrossTwoInstances() {
        instance.run(first -> instance.run(second -> {
            hammer(first.getBean(CounterService.class), second.getBean(CounterService.class),
                    counter -> counter.incrementGuarded("counter:guarded"));

            assertThat(redis.server().get("counter:guarded")).isEqualTo(String.valueOf(TOTAL_CALLS));
        }));
    }

    @Test
    void unguardedTwinLosesUpdatesUnderTheSameLoad() {
        instance.run(first -> instance.run(second -> {
            hammer(first.getBean(CounterService.class), second.getBean(CounterService.class),
                    counter -> counter.incrementUnguarded("counter:unguarded"));

            assertThat(Integer.parseInt(redis.server().get("counter:unguarded"))).isLessThan(TOTAL_CALLS);
        }));
    }

    /**
     * Runs the calls from all threads of both instances at once and waits for them,
     * failing on any error.
     */
    private static void hammer(CounterService first, CounterService second, Consumer<CounterService> call)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2 * THREADS_PER_INSTANCE);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> workers = new ArrayList<>();
            for (CounterService service : List.of(first, second)) {
                for (int t = 0; t < THREADS_PER_INSTANCE; t++) {
                    workers.add(pool.submit(() -> {
                        start.await();
                        for (int i = 0; i < CALLS_PER_THREAD; i++) {
                            call.accept(service);
                        }
                        return null;
                    }));
                }
            }
            start.countDown();
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
        }
        finally {
            pool.shutdownNow();
        }
    }

    static class CounterService {

        private final StringRedisTemplate redis;

        CounterService(StringRedisTemplate redis) {
            this.redis = redis;
        }

        @DistributedLock(key = "'counter'", waitTime = "30s")
        public void incrementGuarded(String counterKey) {
            readModifyWrite(counterKey);
        }

        public void incrementUnguarded(String counterKey) {
            readModifyWrite(counterKey);
        }

        /**
         * GET, then SET of value + 1: two commands, so concurrent callers overwrite each
         * other's increments.
         */
        private void readModifyWrite(String counterKey) {
            String value = redis.opsForValue().get(counterKey);
            int current = (value != null ? Integer.parseInt(value) : 0);
            // Widens the race window so that the unguarded twin loses updates reliably.
            LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
            redis.opsForValue().set(counterKey, String.valueOf(current + 1));
        }

    }

}
