package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import io.github.distlock.DistributedLock;
import io.github.distlock.DistributedLock.LeaseLostAction;
import io.github.distlock.LockLostException;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.aop.LockTestContexts.LockProbe;
import io.github.distlock.aop.LockTestContexts.LostLeases;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * A method returning a {@link CompletionStage} keeps its lock until the stage completes,
 * not merely until it returns, and releases it on whichever thread completes the stage.
 * The ttl is 500 ms with the watchdog on (short, yet with room for a busy machine to
 * renew in time), so a lock still present after three of them is being renewed for the
 * pending stage.
 */
class DistributedLockCompletionStageTest {

    /**
     * Three leases of 500 ms: held that long only if the watchdog renews for the pending
     * stage.
     */
    private static final Duration THREE_TTLS = Duration.ofMillis(1500);

    /**
     * How long to wait for what must happen eventually: generous, as a loaded CI machine
     * stalls for seconds.
     */
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private ApplicationContextRunner runner() {
        return LockTestContexts.runner(redis.server()).withBean(LostLeases.class).withBean(StageService.class);
    }

    @Test
    void lockIsHeldUntilTheReturnedFutureCompletesAndReleasedBeforeTheCallerSeesTheResult() {
        runner().run(context -> {
            StageService service = context.getBean(StageService.class);
            CompletableFuture<String> result = service.later("a");

            assertHeldByTheStageFor(context, "a", THREE_TTLS);
            assertThat(result).isNotDone();

            // Completed from another thread, as asynchronous work usually is.
            CompletableFuture.runAsync(() -> service.pending("a").complete("done"));

            assertThat(result.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(context.getBean(LockProbe.class).exists("lock:{a}")).isFalse();
        });
    }

    @Test
    void exceptionalCompletionReleasesTheLockAndPassesTheFailureOn() {
        runner().run(context -> {
            StageService service = context.getBean(StageService.class);
            CompletableFuture<String> result = service.later("b");
            IllegalStateException failure = new IllegalStateException("remote call failed");

            service.pending("b").completeExceptionally(failure);

            assertThatThrownBy(() -> result.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isSameAs(failure);
            assertThat(context.getBean(LockProbe.class).exists("lock:{b}")).isFalse();
        });
    }

    @Test
    void declaredCompletionStageIsFollowedToo() {
        runner().run(context -> {
            StageService service = context.getBean(StageService.class);
            CompletionStage<String> result = service.stage("c");

            assertHeldByTheStageFor(context, "c", Duration.ofMillis(600));
            service.pending("c").complete("done");

            assertThat(result.toCompletableFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(context.getBean(LockProbe.class).exists("lock:{c}")).isFalse();
        });
    }

    @Test
    void methodThrowingBeforeReturningAStageReleasesAtOnce() {
        runner().run(context -> {
            StageService service = context.getBean(StageService.class);

            assertThatThrownBy(service::throwsAtOnce).isInstanceOf(IllegalStateException.class);

            assertThat(context.getBean(LockProbe.class).exists("lock:{at-once}")).isFalse();
        });
    }

    @Test
    void theCallingThreadKeepsNoHoldOnceTheStageOwnsTheLock() {
        runner().run(context -> {
            StageService service = context.getBean(StageService.class);
            CompletableFuture<String> result = service.later("d");

            assertThat(HeldLocks.countForCurrentThread()).isZero();
            // Not joined: the pending stage owns the lock, so this thread is just another
            // owner.
            assertThatThrownBy(() -> service.now("d")).isInstanceOf(LockTimeoutException.class);

            service.pending("d").complete("done");
            result.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            assertThat(service.now("d")).isEqualTo("now d");
        });
    }

    @Test
    void leaseLostBeforeCompletionCompletesTheFutureWithLockLostException() {
        runner().run(context -> {
            StageService service = context.getBean(StageService.class);
            CompletableFuture<String> result = service.later("e");

            redis.server().del("lock:{e}");
            await().atMost(PATIENCE).until(() -> context.getBean(LostLeases.class).lost("e"));
            service.pending("e").complete("done anyway");

            assertThat(catchThrowable(() -> result.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("'e'")
                .hasMessageContaining("later(");
        });
    }

    @Test
    void interruptCancelsTheMethodsStageWhenTheLeaseIsLost() {
        runner().run(context -> {
            StageService service = context.getBean(StageService.class);
            CompletableFuture<String> result = service.cancellable("f");

            redis.server().del("lock:{f}");

            await().atMost(PATIENCE).until(() -> service.pending("f").isCancelled());
            Throwable failure = catchThrowable(() -> result.get(PATIENCE.toSeconds(), TimeUnit.SECONDS));
            assertThat(failure).isInstanceOf(CancellationException.class);
            assertThat(failure.getSuppressed()).singleElement().isInstanceOf(LockLostException.class);
        });
    }

    @Test
    void cancellingTheReturnedFutureCancelsTheMethodsStageAndReleases() {
        runner().run(context -> {
            StageService service = context.getBean(StageService.class);
            CompletableFuture<String> result = service.later("g");

            result.cancel(true);

            assertThat(service.pending("g")).isCancelled();
            await().atMost(PATIENCE).until(() -> !context.getBean(LockProbe.class).exists("lock:{g}"));
        });
    }

    /**
     * The key stays present for {@code period} and another owner cannot take it
     * meanwhile.
     */
    private static void assertHeldByTheStageFor(ApplicationContext context, String key, Duration period) {
        LockProbe probe = context.getBean(LockProbe.class);
        LockService lockService = context.getBean(LockService.class);
        await().during(period)
            .atMost(period.plus(PATIENCE))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> probe.exists("lock:{" + key + "}") && lockService.tryLock(key, null, Duration.ZERO).isEmpty());
    }

    static class StageService {

        private final Map<String, CompletableFuture<String>> pending = new ConcurrentHashMap<>();

        public CompletableFuture<String> pending(String id) {
            return pending.get(id);
        }

        @DistributedLock(key = "#id", ttl = "500ms", waitTime = "0s")
        public CompletableFuture<String> later(String id) {
            return pending.computeIfAbsent(id, k -> new CompletableFuture<>());
        }

        @DistributedLock(key = "#id", ttl = "500ms", waitTime = "0s")
        public CompletionStage<String> stage(String id) {
            return pending.computeIfAbsent(id, k -> new CompletableFuture<>());
        }

        @DistributedLock(key = "#id", ttl = "500ms", waitTime = "0s", onLeaseLost = LeaseLostAction.INTERRUPT)
        public CompletableFuture<String> cancellable(String id) {
            return pending.computeIfAbsent(id, k -> new CompletableFuture<>());
        }

        @DistributedLock(key = "'at-once'", waitTime = "0s")
        public CompletableFuture<String> throwsAtOnce() {
            throw new IllegalStateException("invalid input");
        }

        @DistributedLock(key = "#id", waitTime = "0s")
        public String now(String id) {
            return "now " + id;
        }

    }

}
