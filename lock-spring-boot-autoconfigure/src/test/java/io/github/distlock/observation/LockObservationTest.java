package io.github.distlock.observation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockRequest.SkipOn;
import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockObservationAutoConfiguration;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;

/**
 * What a Spring Boot application with Micrometer records about its locks, against a real
 * Redis: the auto-configured listeners on a {@link TestObservationRegistry} (the
 * observations, as a tracer sees them) that also feeds a {@link SimpleMeterRegistry}
 * through Micrometer's {@link DefaultMeterObservationHandler}, as Boot's Actuator wires
 * it. Every test also checks that no meter tag carries a lock key.
 */
class LockObservationTest {

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    /**
     * The first connection of a JVM loads the Redis client, which on a loaded machine can
     * take longer than the operation timeout: done once here, so that every test measures
     * only its own locks.
     */
    @BeforeAll
    static void loadTheRedisClient() {
        new LockObservationTest().runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> {
                locks.lock(LockRequest.of("warm-up")).release();
                return true;
            });
        });
    }

    private ApplicationContextRunner runner() {
        RedisTestServer redis = redisExtension.server();
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS,
                    DistributedLockAutoConfiguration.class, DistributedLockObservationAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
    }

    private ApplicationContextRunner withRegistries() {
        return runner().withUserConfiguration(Registries.class);
    }

    @Test
    void anUncontendedLockIsTimedAsAcquiredAtOnceAndActiveWhileHeld() {
        withRegistries().run(context -> {
            LockService locks = context.getBean(LockService.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            TestObservationRegistry observations = context.getBean(TestObservationRegistry.class);

            LockHandle handle = locks.lock(LockRequest.of("order:1").withName("orders"));
            assertThat(timer(meters, "distributed.lock.acquire", "orders", "acquired", "false").count()).isOne();
            assertThat(activeHolds(meters, "orders")).isOne();
            assertThat(meters.find("distributed.lock.acquire.active")
                .tag("lock.name", "orders")
                .longTaskTimer()
                .activeTasks()).isZero();

            assertThat(handle.release()).isTrue();
            assertThat(activeHolds(meters, "orders")).isZero();
            assertThat(meters.get("distributed.lock.hold")
                .tags("lock.name", "orders", "outcome", "released")
                .timer()
                .count()).isOne();
            assertThat(counter(meters, MeterLockListener.RELEASES, "orders", "outcome", "released")).isOne();
            assertThat(counter(meters, MeterLockListener.HAND_OVERS, "orders")).isZero();

            TestObservationRegistryAssert.assertThat(observations)
                .hasNumberOfObservationsEqualTo(2)
                .hasObservationWithNameEqualTo("distributed.lock.acquire")
                .that()
                .hasContextualNameEqualTo("lock acquire orders")
                .hasLowCardinalityKeyValue("lock.name", "orders")
                .hasLowCardinalityKeyValue("outcome", "acquired")
                .hasLowCardinalityKeyValue("waited", "false")
                .hasHighCardinalityKeyValue("lock.key", "order:1")
                .hasBeenStarted()
                .doesNotHaveError()
                .hasBeenStopped();
            TestObservationRegistryAssert.assertThat(observations)
                .hasObservationWithNameEqualTo("distributed.lock.hold")
                .that()
                .hasContextualNameEqualTo("lock hold orders")
                .hasLowCardinalityKeyValue("outcome", "released")
                .hasHighCardinalityKeyValue("lock.key", "order:1")
                .hasBeenStopped();
            assertNoTagContainsAKey(meters, "order:1");
        });
    }

    @Test
    void theKeyIsAHighCardinalityValueOnlyAndAnUnnamedLockIsTaggedUnnamed() {
        withRegistries().run(context -> {
            LockService locks = context.getBean(LockService.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            for (int i = 0; i < 5; i++) {
                locks.lock(LockRequest.of("order:" + i)).release();
            }
            // Five keys, one name: one series per meter and outcome, not one per key.
            assertThat(meters.find("distributed.lock.acquire").timers()).singleElement()
                .satisfies(timer -> assertThat(timer.count()).isEqualTo(5));
            assertThat(timer(meters, "distributed.lock.acquire", "unnamed", "acquired", "false").count()).isEqualTo(5);
            TestObservationRegistry observations = context.getBean(TestObservationRegistry.class);
            TestObservationRegistryAssert.assertThat(observations).hasNumberOfObservationsEqualTo(10);
            for (String name : List.of("distributed.lock.acquire", "distributed.lock.hold")) {
                TestObservationRegistryAssert.assertThat(observations)
                    .forAllObservationsWithNameEqualTo(name,
                            observation -> observation.hasLowCardinalityKeyValue("lock.name", "unnamed")
                                .doesNotHaveLowCardinalityKeyValueWithKey("lock.key")
                                .hasHighCardinalityKeyValueWithKey("lock.key"));
            }
            assertNoTagContainsAKey(meters, "order:0", "order:1", "order:2", "order:3", "order:4");
        });
    }

    @Test
    void aTimeoutIsTimedAsWaitedAndTimedOut() {
        withRegistries().run(context -> {
            LockService locks = context.getBean(LockService.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            LockHandle holder = locks.lock(LockRequest.of("busy").withName("jobs"));
            // Long enough for the first attempt to come back with wait time left, even on
            // a loaded machine.
            Optional<LockHandle> none = locks
                .tryLock(LockRequest.of("busy").withName("jobs").withWaitTime(Duration.ofMillis(500)));
            assertThat(none).isEmpty();
            Timer timedOut = timer(meters, "distributed.lock.acquire", "jobs", "timeout", "true");
            assertThat(timedOut.count()).isOne();
            // The wait's clock starts just before the listener is told, so on a loaded
            // machine the
            // timer can read a few ms under the 500 ms waited (496.8 ms in one CI run):
            // timed as
            // waited, not as the one round trip of the first attempt.
            assertThat(timedOut.totalTime(TimeUnit.NANOSECONDS)).isGreaterThanOrEqualTo(450_000_000L);
            assertThat(activeHolds(meters, "jobs")).isOne();
            holder.release();
            assertThat(activeHolds(meters, "jobs")).isZero();
            assertNoTagContainsAKey(meters, "busy");
        });
    }

    @Test
    void aWaiterThatGetsTheLockHandedOverIsTimedAsWaitedAndCountedAsAHandOver() {
        withRegistries().run(context -> {
            LockService locks = context.getBean(LockService.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            LockHandle holder = locks.lock(LockRequest.of("hot").withName("stock"));
            CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(
                    () -> locks.lock(LockRequest.of("hot").withName("stock").withWaitTime(Duration.ofSeconds(20))));
            // The waiter is inside its acquisition: the acquire long-task timer shows it.
            await().atMost(Duration.ofSeconds(10))
                .until(() -> meters.find("distributed.lock.acquire.active")
                    .tag("lock.name", "stock")
                    .longTaskTimer()
                    .activeTasks() == 1);
            holder.release();
            LockHandle second = waiter.get(10, TimeUnit.SECONDS);
            assertThat(timer(meters, "distributed.lock.acquire", "stock", "acquired", "true").count()).isOne();
            assertThat(counter(meters, MeterLockListener.HAND_OVERS, "stock")).isOne();
            assertThat(activeHolds(meters, "stock")).isOne();
            second.release();
            assertThat(counter(meters, MeterLockListener.RELEASES, "stock", "outcome", "released")).isEqualTo(2);
            assertThat(activeHolds(meters, "stock")).isZero();
        });
    }

    @Test
    void anInterruptedCallerAndADownRedisAreTimedWithTheirOutcomeAndError() {
        withRegistries().run(context -> {
            LockService locks = context.getBean(LockService.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            RedisTestServer redis = redisExtension.server();
            // Connected before Redis is paused, so that the failure below is the
            // command's, not the connect's.
            locks.lock(LockRequest.of("k").withName("warm-up")).release();
            Thread.currentThread().interrupt();
            try {
                assertThatThrownBy(() -> locks.lock(LockRequest.of("k").withName("pay")))
                    .isInstanceOf(LockAcquisitionException.class);
            }
            finally {
                Thread.interrupted();
            }
            redis.pause();
            try {
                assertThatThrownBy(() -> locks.lock(LockRequest.of("k").withName("pay").withWaitTime(Duration.ZERO)))
                    .isInstanceOf(LockBackendException.class);
            }
            finally {
                redis.resume();
            }
            Timer interrupted = timer(meters, "distributed.lock.acquire", "pay", "interrupted", "false");
            assertThat(interrupted.count()).isOne();
            assertThat(interrupted.getId().getTag("error")).isNotEqualTo("none");
            Timer backendError = timer(meters, "distributed.lock.acquire", "pay", "backend-error", "false");
            assertThat(backendError.count()).isOne();
            assertThat(backendError.getId().getTag("error")).isEqualTo(LockBackendException.class.getSimpleName());
            assertThat(meters.find("distributed.lock.hold").tag("lock.name", "pay").timers()).isEmpty();
            TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
                .hasNumberOfObservationsWithNameEqualTo("distributed.lock.acquire", 3)
                .hasNumberOfObservationsWithNameEqualTo("distributed.lock.hold", 1)
                .hasAnObservation(
                        observation -> observation.hasLowCardinalityKeyValue("outcome", "interrupted").hasError())
                .hasAnObservation(
                        observation -> observation.hasLowCardinalityKeyValue("outcome", "backend-error").hasError());
        });
    }

    @Test
    void aCallerThatSkipsIsTimedAsSkippedWithItsReasonAndATimeoutOrBackendErrorOnlyWhenItDoesNot() {
        withRegistries().run(context -> {
            LockService locks = context.getBean(LockService.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            RedisTestServer redis = redisExtension.server();
            LockHandle holder = locks.lock(LockRequest.of("busy").withName("holder"));
            LockRequest skipsWhenBusy = LockRequest.of("busy")
                .withName("jobs")
                .withWaitTime(Duration.ZERO)
                .withSkipOn(SkipOn.BUSY);
            assertThat(locks.tryLock(skipsWhenBusy)).isEmpty();
            assertThat(locks.tryLock(skipsWhenBusy.withSkipOn(SkipOn.UNAVAILABLE))).isEmpty();
            holder.release();
            redis.pause();
            try {
                assertThatThrownBy(() -> locks.lock(skipsWhenBusy.withSkipOn(SkipOn.BUSY_OR_UNAVAILABLE)))
                    .isInstanceOf(LockBackendException.class);
                assertThatThrownBy(() -> locks.lock(skipsWhenBusy)).isInstanceOf(LockBackendException.class);
            }
            finally {
                redis.resume();
            }
            assertThat(acquisitions(meters, "skipped", "busy")).isOne();
            assertThat(acquisitions(meters, "timeout", "none")).isOne();
            assertThat(acquisitions(meters, "skipped", "unavailable")).isOne();
            assertThat(acquisitions(meters, "backend-error", "none")).isOne();
            assertThat(meters.get("distributed.lock.acquire")
                .tags("lock.name", "jobs", "reason", "unavailable")
                .timer()
                .getId()
                .getTag("error")).isEqualTo(LockBackendException.class.getSimpleName());
            TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
                .hasAnObservation(observation -> observation.hasLowCardinalityKeyValue("outcome", "skipped")
                    .hasLowCardinalityKeyValue("reason", "busy")
                    .doesNotHaveError())
                .hasAnObservation(observation -> observation.hasLowCardinalityKeyValue("outcome", "skipped")
                    .hasLowCardinalityKeyValue("reason", "unavailable")
                    .hasError());
        });
    }

    private static long acquisitions(MeterRegistry meters, String outcome, String reason) {
        Timer timer = meters.find("distributed.lock.acquire")
            .tags("lock.name", "jobs", "outcome", outcome, "reason", reason)
            .timer();
        return timer == null ? 0 : timer.count();
    }

    @Test
    void renewalsAreCountedAndADeletedKeyIsALeaseLostThatEndsTheHoldThenTheReleaseFindsItGone() {
        withRegistries().run(context -> {
            LockService locks = context.getBean(LockService.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            RedisTestServer redis = redisExtension.server();
            LockHandle handle = locks
                .lock(LockRequest.of("renewed").withName("reports").withTtl(Duration.ofMillis(900)));
            await().atMost(Duration.ofSeconds(10))
                .until(() -> counter(meters, MeterLockListener.RENEWALS, "reports", "outcome", "ok") >= 2);

            redis.del("lock:{renewed}");
            // Both listeners are told on the watchdog's listener thread, one after the
            // other: wait for both.
            await().atMost(Duration.ofSeconds(10))
                .until(() -> counter(meters, MeterLockListener.LEASES_LOST, "reports", "reason",
                        "expired-or-taken") == 1 && activeHolds(meters, "reports") == 0);
            assertThat(counter(meters, MeterLockListener.LEASES_LOST, "reports", "reason", "renewal-failed")).isZero();
            assertThat(activeHolds(meters, "reports")).isZero();
            assertThat(
                    meters.get("distributed.lock.hold").tags("lock.name", "reports", "outcome", "lost").timer().count())
                .isOne();

            assertThat(handle.release()).isFalse();
            assertThat(counter(meters, MeterLockListener.RELEASES, "reports", "outcome", "already-gone")).isOne();
            assertThat(counter(meters, MeterLockListener.RELEASES, "reports", "outcome", "released")).isZero();
            // The hold ended when the lease was lost; the release does not end it a
            // second time.
            assertThat(meters.find("distributed.lock.hold").timers()).singleElement()
                .satisfies(timer -> assertThat(timer.count()).isOne());
            assertNoTagContainsAKey(meters, "renewed");
        });
    }

    @Test
    void renewalsThatCannotReachRedisAreCountedAsFailedUntilTheLeaseIsLost() {
        withRegistries().run(context -> {
            LockService locks = context.getBean(LockService.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            RedisTestServer redis = redisExtension.server();
            LockHandle handle = locks
                .lock(LockRequest.of("unreachable").withName("exports").withTtl(Duration.ofMillis(1500)));
            redis.pause();
            try {
                await().atMost(Duration.ofSeconds(15))
                    .until(() -> counter(meters, MeterLockListener.LEASES_LOST, "exports", "reason",
                            "renewal-failed") == 1 && activeHolds(meters, "exports") == 0);
            }
            finally {
                redis.resume();
            }
            assertThat(counter(meters, MeterLockListener.RENEWALS, "exports", "outcome", "failed")).isPositive();
            assertThat(activeHolds(meters, "exports")).isZero();
            assertThat(handle.isHeld()).isFalse();
            handle.release();
            assertNoTagContainsAKey(meters, "unreachable");
        });
    }

    @Test
    void aConventionBeanReplacesTheDefaultTags() {
        withRegistries().withBean(LockAcquireObservationConvention.class, RegionTaggedAcquisitions::new)
            .run(context -> {
                LockService locks = context.getBean(LockService.class);
                MeterRegistry meters = context.getBean(MeterRegistry.class);
                locks.lock(LockRequest.of("order:9").withName("orders")).release();
                assertThat(meters.get("distributed.lock.acquire")
                    .tags("lock.name", "orders", "region", "eu")
                    .timer()
                    .count()).isOne();
                TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
                    .hasObservationWithNameEqualTo("distributed.lock.acquire")
                    .that()
                    .hasLowCardinalityKeyValue("region", "eu");
            });
    }

    @Test
    void aMeterRegistryAloneStillGetsTheTimers() {
        runner().withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            LockService locks = context.getBean(LockService.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            LockHandle handle = locks.lock(LockRequest.of("order:2").withName("orders"));
            assertThat(timer(meters, "distributed.lock.acquire", "orders", "acquired", "false").count()).isOne();
            assertThat(activeHolds(meters, "orders")).isOne();
            handle.release();
            assertThat(activeHolds(meters, "orders")).isZero();
            assertThat(counter(meters, MeterLockListener.RELEASES, "orders", "outcome", "released")).isOne();
            assertNoTagContainsAKey(meters, "order:2");
        });
    }

    @Test
    void anObservationRegistryAloneGetsTheObservations() {
        runner().withBean(ObservationRegistry.class, TestObservationRegistry::create).run(context -> {
            context.getBean(LockService.class).lock(LockRequest.of("order:3").withName("orders")).release();
            TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
                .hasNumberOfObservationsWithNameEqualTo("distributed.lock.acquire", 1)
                .hasNumberOfObservationsWithNameEqualTo("distributed.lock.hold", 1);
        });
    }

    @Test
    void bootsRegistryWithOnlyItsMeterHandlerGetsTheSameMetersDirectlyAsThroughObservations() {
        List<String> direct = new ArrayList<>();
        actuator().run(context -> {
            assertThat(context).hasSingleBean(MeterTimingLockListener.class)
                .doesNotHaveBean(ObservationLockListener.class);
            direct.addAll(everyLockMeterAfterTheSameLocks(context));
        });
        List<String> observed = new ArrayList<>();
        actuator().withPropertyValues("distributed-lock.observation.direct-meters=false").run(context -> {
            assertThat(context).hasSingleBean(ObservationLockListener.class)
                .doesNotHaveBean(MeterTimingLockListener.class);
            observed.addAll(everyLockMeterAfterTheSameLocks(context));
        });
        // Same names, types, tags (the meter handler's error tag included, and the
        // backend's) and counts, whichever path recorded them.
        assertThat(direct).isEqualTo(observed)
            .contains(
                    "TIMER distributed.lock.acquire [backend=redis, error=none, lock.name=orders, outcome=acquired, "
                            + "reason=none, " + "waited=false] 1",
                    "TIMER distributed.lock.acquire [backend=redis, error=none, lock.name=jobs, outcome=timeout, "
                            + "reason=none, " + "waited=true] 1",
                    "TIMER distributed.lock.acquire [backend=redis, error=none, lock.name=nightly, outcome=skipped, "
                            + "reason=busy, " + "waited=false] 1",
                    "TIMER distributed.lock.acquire [backend=redis, error="
                            + LockAcquisitionException.class.getSimpleName()
                            + ", lock.name=pay, outcome=interrupted, reason=none, waited=false] 1",
                    "TIMER distributed.lock.hold [backend=redis, error=none, lock.name=orders, outcome=released] 1",
                    "TIMER distributed.lock.hold [backend=redis, error=none, lock.name=reports, outcome=lost] 1",
                    "LONG_TASK_TIMER distributed.lock.hold.active [backend=redis, lock.name=orders] 0",
                    "COUNTER distributed.lock.releases [backend=redis, lock.name=reports, outcome=already-gone] 1");
    }

    @Test
    void theDirectPathRecordsEachTimerOnceAndTheActiveLocks() {
        actuator().run(context -> {
            LockService locks = context.getBean(LockService.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            LockHandle handle = locks.lock(LockRequest.of("order:5").withName("orders"));
            assertThat(timer(meters, "distributed.lock.acquire", "orders", "acquired", "false").count()).isOne();
            assertThat(activeHolds(meters, "orders")).isOne();
            assertThat(meters.get("distributed.lock.acquire.active")
                .tag("lock.name", "orders")
                .longTaskTimer()
                .activeTasks()).isZero();
            handle.release();
            handle.release();
            assertThat(activeHolds(meters, "orders")).isZero();
            assertThat(meters.find("distributed.lock.acquire").timers()).singleElement()
                .satisfies(timer -> assertThat(timer.count()).isOne());
            assertThat(meters.find("distributed.lock.hold").timers()).singleElement()
                .satisfies(timer -> assertThat(timer.count()).isOne());
            assertNoTagContainsAKey(meters, "order:5");
        });
    }

    @Test
    void aTracingLikeHandlerGetsTheObservationsAndTheTimersAreRecordedOnce() {
        RecordingHandler tracer = new RecordingHandler();
        actuator().withBean("tracingLike", RecordingHandler.class, () -> tracer).run(context -> {
            assertThat(context).hasSingleBean(ObservationLockListener.class)
                .doesNotHaveBean(MeterTimingLockListener.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            context.getBean(LockService.class).lock(LockRequest.of("order:6").withName("orders")).release();
            assertThat(tracer.stopped).containsExactly("lock acquire orders", "lock hold orders");
            assertThat(meters.find("distributed.lock.acquire").timers()).singleElement()
                .satisfies(timer -> assertThat(timer.count()).isOne());
            assertThat(meters.find("distributed.lock.hold").timers()).singleElement()
                .satisfies(timer -> assertThat(timer.count()).isOne());
        });
    }

    @Test
    void aConventionBeanOnBootsRegistryTakesTheObservationPath() {
        actuator().withBean(LockAcquireObservationConvention.class, RegionTaggedAcquisitions::new).run(context -> {
            assertThat(context).doesNotHaveBean(MeterTimingLockListener.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            context.getBean(LockService.class).lock(LockRequest.of("order:7").withName("orders")).release();
            assertThat(meters.find("distributed.lock.acquire").timers()).singleElement()
                .satisfies(timer -> assertThat(timer.getId().getTag("region")).isEqualTo("eu"))
                .satisfies(timer -> assertThat(timer.count()).isOne());
        });
    }

    @Test
    void bootsObservationSwitchDropsTheTimersButNotTheCountersOnEitherPath() {
        for (String directMeters : List.of("true", "false")) {
            actuator()
                .withPropertyValues("distributed-lock.observation.direct-meters=" + directMeters,
                        "management.observations.enable.distributed.lock=false")
                .run(context -> {
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    context.getBean(LockService.class).lock(LockRequest.of("order:8").withName("orders")).release();
                    assertThat(meters.find("distributed.lock.acquire").meters()).as(directMeters).isEmpty();
                    assertThat(meters.find("distributed.lock.acquire.active").meters()).isEmpty();
                    assertThat(meters.find("distributed.lock.hold").meters()).isEmpty();
                    assertThat(meters.find("distributed.lock.hold.active").meters()).isEmpty();
                    assertThat(counter(meters, MeterLockListener.RELEASES, "orders", "outcome", "released")).isOne();
                });
        }
    }

    @Test
    void bootsLongTaskTimerSwitchDropsTheActiveMetersOfTheDirectPath() {
        actuator().withPropertyValues(BootAutoConfigurations.longTaskTimersOff()).run(context -> {
            assertThat(context).hasSingleBean(MeterTimingLockListener.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            context.getBean(LockService.class).lock(LockRequest.of("order:9").withName("orders")).release();
            assertThat(meters.find("distributed.lock.acquire.active").meters()).isEmpty();
            assertThat(meters.find("distributed.lock.hold.active").meters()).isEmpty();
            assertThat(meters.get("distributed.lock.hold")
                .tags("lock.name", "orders", "outcome", "released")
                .timer()
                .count()).isOne();
        });
    }

    /**
     * An uncontended lock, a timeout after a wait, a skip of a busy lock, an interrupted
     * caller and a lease lost then released: every meter of the starter, as
     * {@code TYPE name [tags] count} lines (active tasks for a long-task timer), sorted.
     */
    private static List<String> everyLockMeterAfterTheSameLocks(AssertableApplicationContext context) {
        LockService locks = context.getBean(LockService.class);
        MeterRegistry meters = context.getBean(MeterRegistry.class);
        locks.lock(LockRequest.of("order:1").withName("orders")).release();
        LockHandle holder = locks.lock(LockRequest.of("busy").withName("jobs"));
        assertThat(locks.tryLock(LockRequest.of("busy").withName("jobs").withWaitTime(Duration.ofMillis(300))))
            .isEmpty();
        assertThat(locks
            .tryLock(LockRequest.of("busy").withName("nightly").withWaitTime(Duration.ZERO).withSkipOn(SkipOn.BUSY)))
            .isEmpty();
        holder.release();
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> locks.lock(LockRequest.of("k").withName("pay")))
                .isInstanceOf(LockAcquisitionException.class);
        }
        finally {
            Thread.interrupted();
        }
        LockHandle lost = locks.lock(LockRequest.of("renewed").withName("reports").withTtl(Duration.ofMillis(900)));
        redisExtension.server().del("lock:{renewed}");
        await().atMost(Duration.ofSeconds(10))
            .until(() -> counter(meters, MeterLockListener.LEASES_LOST, "reports", "reason", "expired-or-taken") == 1
                    && activeHolds(meters, "reports") == 0);
        assertThat(lost.release()).isFalse();
        List<String> lines = new ArrayList<>();
        for (Meter meter : meters.getMeters()) {
            if (!meter.getId().getName().startsWith("distributed.lock")) {
                continue;
            }
            long count = -1;
            if (meter instanceof Timer timer) {
                count = timer.count();
            }
            else if (meter instanceof LongTaskTimer active) {
                count = active.activeTasks();
            }
            else if (meter instanceof Counter counted) {
                count = (long) counted.count();
            }
            // Renewals depend on timing; everything else is exact.
            if (!meter.getId().getName().equals(MeterLockListener.RENEWALS)) {
                lines.add(meter.getId().getType() + " " + meter.getId().getName() + " "
                        + meter.getId().getTags().stream().map(tag -> tag.getKey() + "=" + tag.getValue()).toList()
                        + " " + count);
            }
        }
        Collections.sort(lines);
        return lines;
    }

    /**
     * Boot's Actuator: its observation registry with its default meter handler bean, and
     * a simple meter registry.
     */
    private ApplicationContextRunner actuator() {
        return runner()
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.OBSERVATION, BootAutoConfigurations.METRICS,
                    BootAutoConfigurations.COMPOSITE_METER_REGISTRY, BootAutoConfigurations.SIMPLE_METRICS_EXPORT));
    }

    private static Timer timer(MeterRegistry meters, String name, String lockName, String outcome, String waited) {
        return meters.get(name).tags("lock.name", lockName, "outcome", outcome, "waited", waited).timer();
    }

    private static long activeHolds(MeterRegistry meters, String lockName) {
        LongTaskTimer active = meters.get("distributed.lock.hold.active").tag("lock.name", lockName).longTaskTimer();
        return active.activeTasks();
    }

    private static long counter(MeterRegistry meters, String name, String lockName, String... tags) {
        Counter counter = meters.find(name).tag("lock.name", lockName).tags(tags).counter();
        return counter == null ? -1 : (long) counter.count();
    }

    private static void assertNoTagContainsAKey(MeterRegistry meters, String... keys) {
        List<Meter> all = meters.getMeters();
        assertThat(all).isNotEmpty();
        for (Meter meter : all) {
            for (Tag tag : meter.getId().getTags()) {
                for (String key : keys) {
                    assertThat(tag.getValue()).as("tag %s of %s", tag.getKey(), meter.getId().getName())
                        .doesNotContain(key);
                }
            }
        }
    }

    /**
     * The registries as Boot's Actuator wires them: observations that also become meters.
     */
    @Configuration(proxyBeanMethods = false)
    static class Registries {

        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        TestObservationRegistry observationRegistry(SimpleMeterRegistry meterRegistry) {
            TestObservationRegistry registry = TestObservationRegistry.create();
            registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meterRegistry));
            return registry;
        }

    }

    /**
     * What a tracer's handler sees: the observations it is told of, by contextual name
     * (set by their end).
     */
    static class RecordingHandler implements ObservationHandler<Observation.Context> {

        final List<String> stopped = new CopyOnWriteArrayList<>();

        @Override
        public void onStop(Observation.Context context) {
            stopped.add(context.getContextualName());
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }

    }

    /** A convention an application might declare: the default tags plus its region. */
    static class RegionTaggedAcquisitions extends DefaultLockAcquireObservationConvention {

        @Override
        public KeyValues getLowCardinalityKeyValues(LockObservationContext.Acquire context) {
            return super.getLowCardinalityKeyValues(context).and("region", "eu");
        }

    }

}
