package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;

import io.github.distlock.DistributedLock;
import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockFailureHandler;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.autoconfigure.DistributedLockObservationAutoConfiguration;
import io.github.distlock.testsupport.RedisServerExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import reactor.core.publisher.Mono;

/**
 * A busy lock and an unavailable store are two different failures, and a method may treat
 * them differently: {@code onBusy} and {@code onUnavailable}, each falling back to
 * {@code onFailure} and then to {@code distributed-lock.on-busy} /
 * {@code on-unavailable}. A skip because Redis is down is logged (rate-limited per lock),
 * a skip because the lock is busy is not, and metrics count both as {@code skipped} with
 * their reason.
 */
@ExtendWith(OutputCaptureExtension.class)
class DistributedLockSkipTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    /** The start of the rate-limited WARN, once per message. */
    private static final Pattern UNAVAILABLE_SKIP_WARNING = Pattern
        .compile("WARN.*Skipped \\S+\\.(\\w+)\\(\\) " + "without running it");

    @AfterEach
    void restartRedisIfATestLeftItStopped() {
        if (!redis.server().isRunning()) {
            redis.server().restart();
        }
    }

    private ApplicationContextRunner runner() {
        return LockTestContexts.runner(redis.server())
            .withPropertyValues("distributed-lock.operation-timeout=1s")
            .withBean(SplitService.class);
    }

    /**
     * The context's first connection (and the JVM's first, which loads the client) may
     * take longer than the operation timeout on a loaded machine: made here, so that the
     * test's own calls find the connection open.
     */
    private static ApplicationContext connected(ApplicationContext context) {
        LockService locks = context.getBean(LockService.class);
        await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> {
            locks.lock(LockRequest.of("warm-up").withWaitTime(Duration.ZERO)).release();
            return true;
        });
        return context;
    }

    @Test
    void skipWhenBusyFailWhenDownSkipsWhileAnotherOwnerHoldsTheLockAndThrowsWhileRedisIsStopped() {
        runner().run(context -> {
            SplitService service = connected(context).getBean(SplitService.class);
            LockTestContexts.whileBusyIsHeldElsewhere(context, () -> assertThat(service.skipWhenBusy()).isNull());
            redis.server().stop();

            assertThatThrownBy(service::skipWhenBusy).isInstanceOf(LockBackendException.class);
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void skipWhenDownFailWhenBusyThrowsWhileAnotherOwnerHoldsTheLockAndSkipsWhileRedisIsStopped() {
        runner().run(context -> {
            SplitService service = connected(context).getBean(SplitService.class);
            LockTestContexts.whileBusyIsHeldElsewhere(context,
                    () -> assertThatThrownBy(service::skipWhenDown).isInstanceOf(LockTimeoutException.class));
            redis.server().stop();

            assertThat(service.skipWhenDown()).isNull();
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void onFailureSkipStillSkipsBothUnlessTheSpecificAttributeSaysOtherwise() {
        runner().run(context -> {
            SplitService service = connected(context).getBean(SplitService.class);
            LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
                assertThat(service.skipBoth()).isNull();
                assertThat(service.skipButFailWhenDown()).isNull();
            });
            redis.server().stop();

            assertThat(service.skipBoth()).isNull();
            assertThatThrownBy(service::skipButFailWhenDown).isInstanceOf(LockBackendException.class);
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void theConfiguredDefaultsDecideForMethodsThatSetNeitherTheirCaseNorOnFailure() {
        runner().withPropertyValues("distributed-lock.on-busy=skip", "distributed-lock.on-unavailable=throw")
            .run(context -> {
                SplitService service = connected(context).getBean(SplitService.class);
                LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
                    assertThat(service.unset()).isNull();
                    // onFailure on the method wins over the property.
                    assertThatThrownBy(service::throwBoth).isInstanceOf(LockTimeoutException.class);
                });
                redis.server().stop();

                assertThatThrownBy(service::unset).isInstanceOf(LockBackendException.class);
                assertThat(service.invocations()).isZero();
            });
    }

    @Test
    void aStageAndAMonoMethodSkipWhenBusyAndFailWhenRedisIsStopped() {
        runner().run(context -> {
            SplitService service = connected(context).getBean(SplitService.class);
            LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
                assertThat(service.stage()).isCompletedWithValue(null);
                assertThat(service.mono().block()).isNull();
            });
            redis.server().stop();

            assertThatThrownBy(service::stage).isInstanceOf(LockBackendException.class);
            assertThatThrownBy(() -> service.mono().block()).isInstanceOf(LockBackendException.class);
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void theLockOperationResolvesEachCaseToItsAttributeThenOnFailureThenTheProperty() {
        runner().withPropertyValues("distributed-lock.on-busy=skip", "distributed-lock.on-unavailable=skip")
            .run(context -> {
                assertActions(context, "unset", FailureAction.SKIP, FailureAction.SKIP);
                assertActions(context, "throwBoth", FailureAction.THROW, FailureAction.THROW);
                assertActions(context, "skipWhenBusy", FailureAction.SKIP, FailureAction.THROW);
                assertActions(context, "skipWhenDown", FailureAction.SKIP, FailureAction.SKIP);
                assertActions(context, "skipButFailWhenDown", FailureAction.SKIP, FailureAction.THROW);
            });
        runner().run(context -> {
            assertActions(context, "unset", FailureAction.THROW, FailureAction.THROW);
            assertActions(context, "skipWhenDown", FailureAction.THROW, FailureAction.SKIP);
            assertActions(context, "skipBoth", FailureAction.SKIP, FailureAction.SKIP);
        });
    }

    @Test
    void defaultInAPropertyFailsTheStartupNamingThePropertyTheValueAndTheFix() {
        for (String property : new String[] { "on-busy", "on-unavailable" }) {
            runner().withPropertyValues("distributed-lock." + property + "=default").run(context -> {
                assertThat(context).hasFailed();
                Throwable failure = context.getStartupFailure();
                while (!(failure instanceof InvalidConfigurationPropertyValueException) && failure.getCause() != null) {
                    failure = failure.getCause();
                }
                assertThat(failure).isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("distributed-lock." + property)
                    .hasMessageContaining("'default'")
                    .hasMessageContaining("use throw (the default: the call fails) or skip");
            });
        }
    }

    @Test
    void aFailureHandlerTogetherWithOnBusyOrOnUnavailableFailsTheStartupNamingEach() {
        runner().withBean("fallback", LockFailureHandler.class, () -> failure -> null)
            .withBean(HandlerAndSplitService.class)
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(InvalidLockDefinitionException.class)
                    .hasMessageContaining("HandlerAndSplitService.quote(")
                    .hasMessageContaining("failureHandler = \"fallback\"")
                    .hasMessageContaining("onBusy = SKIP, onUnavailable = THROW")
                    .hasMessageContaining("or remove failureHandler");
            });
    }

    @Test
    void aSkipBecauseRedisIsDownWarnsOncePerMinutePerLockAndCountsTheCallsSkippedMeanwhile(CapturedOutput output) {
        runner().run(context -> {
            SplitService service = connected(context).getBean(SplitService.class);
            AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-30T02:00:00Z"));
            context.getBean(DistributedLockInterceptor.class).setSkipWarningClock(now::get);
            redis.server().stop();

            for (int i = 0; i < 5; i++) {
                assertThat(service.skipWhenDown()).isNull();
            }
            assertThat(service.otherLockSkipWhenDown()).isNull();
            now.set(now.get().plusSeconds(59));
            assertThat(service.skipWhenDown()).isNull();
            assertThat(warnings(output)).as(output.getAll()).containsExactly("skipWhenDown", "otherLockSkipWhenDown");

            now.set(now.get().plusSeconds(2));
            assertThat(service.skipWhenDown()).isNull();

            assertThat(warnings(output)).containsExactly("skipWhenDown", "otherLockSkipWhenDown", "skipWhenDown");
            assertThat(output.getAll()).contains("SplitService.skipWhenDown()")
                .contains("lock 'SplitService.skipWhenDown' (key 'busy')")
                .contains("5 more calls of lock 'SplitService.skipWhenDown' skipped for this reason in the 61s "
                        + "since the previous warning")
                .contains("set onUnavailable = THROW on the method, or distributed-lock.on-unavailable=throw");
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void aSkipBecauseTheLockIsBusyLogsNoWarning(CapturedOutput output) {
        runner().run(context -> {
            SplitService service = connected(context).getBean(SplitService.class);
            LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
                for (int i = 0; i < 3; i++) {
                    assertThat(service.skipBoth()).isNull();
                }
            });

            assertThat(service.invocations()).isZero();
            assertThat(warnings(output)).isEmpty();
        });
    }

    @Test
    void skippedCallsAreTimedAsSkippedWithTheirReasonAndOnlyAFailedCallAsTimeoutOrBackendError() {
        runner().withConfiguration(AutoConfigurations.of(DistributedLockObservationAutoConfiguration.class))
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .run(context -> {
                SplitService service = connected(context).getBean(SplitService.class);
                MeterRegistry meters = context.getBean(MeterRegistry.class);
                LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
                    assertThat(service.skipBoth()).isNull();
                    assertThatThrownBy(service::throwBoth).isInstanceOf(LockTimeoutException.class);
                });
                redis.server().stop();
                assertThat(service.skipBoth()).isNull();
                assertThatThrownBy(service::throwBoth).isInstanceOf(LockBackendException.class);

                assertThat(acquisitions(meters, "SplitService.skipBoth", "skipped", "busy")).isOne();
                assertThat(acquisitions(meters, "SplitService.skipBoth", "skipped", "unavailable")).isOne();
                assertThat(acquisitions(meters, "SplitService.throwBoth", "timeout", "none")).isOne();
                assertThat(acquisitions(meters, "SplitService.throwBoth", "backend-error", "none")).isOne();
                // Nothing else: a skip is not also a timeout or a backend error.
                assertThat(meters.find("distributed.lock.acquire").tag("lock.name", "SplitService.skipBoth").timers())
                    .hasSize(2);
                assertThat(meters.find("distributed.lock.acquire").tag("lock.name", "SplitService.throwBoth").timers())
                    .hasSize(2);
            });
    }

    private static long acquisitions(MeterRegistry meters, String lockName, String outcome, String reason) {
        Timer timer = meters.find("distributed.lock.acquire")
            .tags("lock.name", lockName, "outcome", outcome, "reason", reason)
            .timer();
        return (timer == null ? 0 : timer.count());
    }

    /** The methods the rate-limited WARN was logged for, in order. */
    private static List<String> warnings(CapturedOutput output) {
        Matcher matcher = UNAVAILABLE_SKIP_WARNING.matcher(output.getAll());
        List<String> methods = new ArrayList<>();
        while (matcher.find()) {
            methods.add(matcher.group(1));
        }
        return methods;
    }

    private static void assertActions(ApplicationContext context, String method, FailureAction busy,
            FailureAction unavailable) throws NoSuchMethodException {
        LockOperation operation = context.getBean(LockOperationSource.class)
            .getLockOperation(SplitService.class.getMethod(method), SplitService.class);
        assertThat(operation.getBusyAction()).as(method + " when busy").isEqualTo(busy);
        assertThat(operation.getUnavailableAction()).as(method + " when unavailable").isEqualTo(unavailable);
    }

    static class SplitService {

        private final AtomicInteger invocations = new AtomicInteger();

        int invocations() {
            return invocations.get();
        }

        private String invoked() {
            invocations.incrementAndGet();
            return "ran";
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onBusy = FailureAction.SKIP,
                onUnavailable = FailureAction.THROW)
        public String skipWhenBusy() {
            return invoked();
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onUnavailable = FailureAction.SKIP)
        public String skipWhenDown() {
            return invoked();
        }

        @DistributedLock(key = "'other'", waitTime = "0s", onUnavailable = FailureAction.SKIP)
        public String otherLockSkipWhenDown() {
            return invoked();
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public String skipBoth() {
            return invoked();
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP,
                onUnavailable = FailureAction.THROW)
        public String skipButFailWhenDown() {
            return invoked();
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.THROW)
        public String throwBoth() {
            return invoked();
        }

        @DistributedLock(key = "'busy'", waitTime = "0s")
        public String unset() {
            return invoked();
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onBusy = FailureAction.SKIP)
        public CompletableFuture<String> stage() {
            return CompletableFuture.completedFuture(invoked());
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onBusy = FailureAction.SKIP)
        public Mono<String> mono() {
            return Mono.fromSupplier(this::invoked);
        }

    }

    static class HandlerAndSplitService {

        @DistributedLock(key = "#symbol", failureHandler = "fallback", onBusy = FailureAction.SKIP,
                onUnavailable = FailureAction.THROW)
        public String quote(String symbol) {
            return symbol;
        }

    }

}
