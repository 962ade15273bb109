package io.github.distlock.segment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * Which segment {@link SegmentedLock} picks, that the work runs under its lock, and when
 * it gives up.
 */
class SegmentedLockTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(BootAutoConfigurations.REDIS, DistributedLockAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
                    // Roomy: on a loaded machine the first connection of a fresh context
                    // can take seconds.
                    "distributed-lock.operation-timeout=15s");
    }

    @Test
    void takesAFreeSegmentInsteadOfQueueingForABusyOne() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            // Wait 0: queueing for a busy segment would throw instead of returning.
            SegmentedLock segments = new SegmentedLock(locks, LockRequest.of("stock").withWaitTime(Duration.ZERO), 4);
            List<LockHandle> held = new ArrayList<>();
            for (int segment = 0; segment < 3; segment++) {
                held.add(locks.lock(segments.key(segment), Duration.ofSeconds(30), Duration.ZERO));
            }

            for (int attempt = 0; attempt < 5; attempt++) {
                assertThat(segments.callOnSegment(segment -> true, (segment, lock) -> Optional.of(segment)))
                    .contains(3);
            }
            held.forEach(LockHandle::release);
        });
    }

    @Test
    void theWorkRunsUnderItsSegmentsLockWhichIsReleasedAfterwards() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            StringRedisTemplate redisTemplate = context.getBean(StringRedisTemplate.class);
            SegmentedLock segments = new SegmentedLock(locks, LockRequest.of("stock:sku-1"), 3);

            Optional<Boolean> lockedDuringWork = segments.callOnSegment(segment -> segment == 1,
                    (segment, lock) -> Optional
                        .of(lock.isHeld() && Boolean.TRUE.equals(redisTemplate.hasKey("lock:{stock:sku-1#1}"))));

            assertThat(lockedDuringWork).contains(true);
            assertThat(redisTemplate.hasKey("lock:{stock:sku-1#1}")).isFalse();
        });
    }

    @Test
    void segmentsThePredicateRejectsAreNeitherLockedNorWaitedFor() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            SegmentedLock segments = new SegmentedLock(locks, LockRequest.of("stock").withWaitTime(Duration.ZERO), 4);
            // Busy, but rejected by the predicate: with wait 0, waiting for it would
            // throw.
            LockHandle busy = locks.lock(segments.key(0), Duration.ofSeconds(30), Duration.ZERO);
            List<Integer> worked = new CopyOnWriteArrayList<>();

            Optional<Integer> result = segments.callOnSegment(segment -> segment == 2, (segment, lock) -> {
                worked.add(segment);
                return Optional.of(segment);
            });

            assertThat(result).contains(2);
            assertThat(worked).containsExactly(2);
            busy.release();
        });
    }

    @Test
    void returnsEmptyOnceEverySegmentTurnedOutEmptyTryingEachOnce() {
        runner().run(context -> {
            SegmentedLock segments = new SegmentedLock(context.getBean(LockService.class), LockRequest.of("stock"), 5);
            List<Integer> worked = new CopyOnWriteArrayList<>();

            Optional<String> result = segments.callOnSegment(segment -> true, (segment, lock) -> {
                worked.add(segment);
                return Optional.empty();
            });

            assertThat(result).isEmpty();
            assertThat(worked).containsExactlyInAnyOrder(0, 1, 2, 3, 4);
        });
    }

    @Test
    void whenEverySegmentWithCapacityStaysBusyItTimesOutNamingTheSegment() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            SegmentedLock segments = new SegmentedLock(locks,
                    LockRequest.of("stock").withWaitTime(Duration.ofMillis(200)), 2);
            LockHandle busy = locks.lock(segments.key(1), Duration.ofSeconds(30), Duration.ZERO);

            assertThatThrownBy(
                    () -> segments.callOnSegment(segment -> segment == 1, (segment, lock) -> Optional.of(segment)))
                .isInstanceOf(LockTimeoutException.class)
                .hasMessageContaining("stock#1");
            busy.release();
        });
    }

    @Test
    void queuesForABusySegmentAndGetsItWhenItsHolderLetsGo() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            SegmentedLock segments = new SegmentedLock(locks,
                    LockRequest.of("stock").withWaitTime(Duration.ofSeconds(30)), 1);
            LockHandle busy = locks.lock(segments.key(0), Duration.ofSeconds(30), Duration.ZERO);
            ExecutorService caller = Executors.newSingleThreadExecutor();
            try {
                Future<Optional<Integer>> result = caller
                    .submit(() -> segments.callOnSegment(segment -> true, (segment, lock) -> Optional.of(segment)));
                busy.release();

                assertThat(result.get(30, TimeUnit.SECONDS)).contains(0);
            }
            finally {
                caller.shutdownNow();
            }
        });
    }

    @Test
    void concurrentCallersSellEveryUnitOnceAcrossTheSegments() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            SegmentedLock segments = new SegmentedLock(locks,
                    LockRequest.of("stock:hot").withWaitTime(Duration.ofSeconds(30)), 4);
            // A non-atomic read-yield-write per segment: only the segment's lock keeps
            // updates from being lost.
            long[] stock = { 10, 10, 10, 10 };
            ExecutorService callers = Executors.newFixedThreadPool(8);
            try {
                List<Future<Optional<Integer>>> sales = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    sales.add(callers
                        .submit(() -> segments.callOnSegment(segment -> read(stock, segment) > 0, (segment, lock) -> {
                            long units = read(stock, segment);
                            if (units == 0) {
                                return Optional.empty();
                            }
                            Thread.yield();
                            write(stock, segment, units - 1);
                            return Optional.of(segment);
                        })));
                }
                int sold = 0;
                for (Future<Optional<Integer>> sale : sales) {
                    sold += sale.get(60, TimeUnit.SECONDS).isPresent() ? 1 : 0;
                }

                assertThat(sold).isEqualTo(40);
                synchronized (stock) {
                    assertThat(stock).containsOnly(0);
                }
            }
            finally {
                callers.shutdownNow();
            }
        });
    }

    @Test
    void rejectsFewerThanOneSegmentAndUnknownSegments() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);

            assertThatThrownBy(() -> new SegmentedLock(locks, LockRequest.of("stock"), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'stock'")
                .hasMessageContaining("at least 1 segment, was 0");
            assertThatThrownBy(() -> new SegmentedLock(locks, LockRequest.of("stock"), 2).key(2))
                .isInstanceOf(IndexOutOfBoundsException.class);
        });
    }

    // Memory visibility between the callers comes from the lock's round trips, not from
    // Java; synchronized
    // reads and writes make the test about lost updates only, which only the distributed
    // lock prevents.
    private static long read(long[] stock, int segment) {
        synchronized (stock) {
            return stock[segment];
        }
    }

    private static void write(long[] stock, int segment, long value) {
        synchronized (stock) {
            stock[segment] = value;
        }
    }

}
