package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import io.github.distlock.DistributedLock;
import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.DistributedLock.LeaseLostAction;
import io.github.distlock.LockFailureHandler;
import io.github.distlock.LockHandle;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.aop.LockTestContexts.LockProbe;
import io.github.distlock.aop.LockTestContexts.LostLeases;
import io.github.distlock.testsupport.RedisServerExtension;
import reactor.core.Disposable;
import reactor.adapter.JdkFlowAdapter;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A method returning a Reactor {@code Mono} or {@code Flux}, or another reactive type
 * that Spring's {@code ReactiveAdapterRegistry} adapts, takes its lock on subscription,
 * not on the call, and holds it until the publisher terminates or the subscription is
 * cancelled. Leases that must outlive their ttl use 500 ms with the watchdog on: short,
 * yet with room for a busy machine to renew in time.
 */
class DistributedLockReactiveTest {

    /**
     * Three leases of 500 ms: held that long only if the watchdog renews for the pending
     * publisher.
     */
    private static final Duration THREE_TTLS = Duration.ofMillis(1500);

    /**
     * How long to wait for what must happen eventually. Generous, as it costs nothing
     * when the machine is quick, and a loaded CI machine stalls for seconds (a 1 s bound
     * failed there).
     */
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private ApplicationContextRunner runner() {
        return LockTestContexts.runner(redis.server())
            .withBean(LostLeases.class)
            .withBean("cachedPrice", LockFailureHandler.class, () -> failure -> Mono.just("cached"))
            .withBean(ReactiveService.class);
    }

    @Test
    void nothingIsAcquiredAndTheMethodIsNotInvokedBeforeSubscription() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            redis.server().resetStats();

            Mono<String> result = service.delayed("a", THREE_TTLS);

            assertThat(result).isNotNull();
            assertThat(LockTestContexts.lockRoundTrips(redis.server())).isZero();
            assertThat(context.getBean(LockProbe.class).exists("lock:{a}")).isFalse();
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void monoHoldsTheLockFromSubscriptionUntilItCompletesThenReleases() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            Mono<String> result = service.controlled("b");

            CompletableFuture<String> subscribed = result.toFuture();
            await().atMost(PATIENCE).until(() -> context.getBean(LockProbe.class).exists("lock:{b}"));
            assertHeldFor(context, "b", THREE_TTLS);
            // Completed by the test, not after a delay: on a busy machine a delay could
            // end inside the check.
            assertThat(subscribed).isNotDone();
            service.sink("b").tryEmitValue("done b");

            assertThat(subscribed.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo("done b");
            assertThat(service.invocations()).isOne();
            await().atMost(PATIENCE).until(() -> !context.getBean(LockProbe.class).exists("lock:{b}"));
        });
    }

    @Test
    void eachSubscriptionTakesTheLockAndInvokesTheMethodAnew() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            Mono<String> result = service.delayed("c", Duration.ZERO);

            assertThat(result.block(PATIENCE)).isEqualTo("done c");
            assertThat(result.block(PATIENCE)).isEqualTo("done c");

            assertThat(service.invocations()).isEqualTo(2);
            await().atMost(PATIENCE).until(() -> !context.getBean(LockProbe.class).exists("lock:{c}"));
        });
    }

    @Test
    void disposingTheSubscriptionReleasesTheLock() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            LockProbe probe = context.getBean(LockProbe.class);

            Disposable subscription = service.never("d").subscribe();
            await().atMost(PATIENCE).until(() -> probe.exists("lock:{d}"));
            assertHeldFor(context, "d", Duration.ofMillis(1000));

            subscription.dispose();

            await().atMost(PATIENCE).until(() -> !probe.exists("lock:{d}"));
        });
    }

    @Test
    void cancellingWhileWaitingForTheLockLeavesNoLockBehind() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            LockProbe probe = context.getBean(LockProbe.class);
            LockHandle other = context.getBean(LockService.class)
                .lock(LockRequest.of("queued").withTtl(Duration.ofSeconds(10)).withWaitTime(Duration.ZERO));
            Disposable subscription = service.waiting().subscribe();
            await().during(Duration.ofMillis(200)).atMost(PATIENCE).until(() -> !subscription.isDisposed());

            subscription.dispose();
            other.release();

            // Whether the wait was cut short or the lock was taken after the cancel, it
            // must not stay held.
            await().during(Duration.ofMillis(500)).atMost(PATIENCE).until(() -> !probe.exists("lock:{queued}"));
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void fluxHoldsTheLockUntilItsLastElementAndCompletion() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            LockProbe probe = context.getBean(LockProbe.class);

            List<Boolean> heldAtEachElement = service.ticks("e")
                .map(tick -> probe.exists("lock:{e}"))
                .collectList()
                .block(PATIENCE);

            assertThat(heldAtEachElement).hasSize(5).containsOnly(true);
            await().atMost(PATIENCE).until(() -> !probe.exists("lock:{e}"));
        });
    }

    @Test
    void aReactiveTypeOtherThanReactorsIsLockedThroughItsAdapterOnSubscriptionOnly() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            LockProbe probe = context.getBean(LockProbe.class);

            // java.util.concurrent.Flow.Publisher: adapted by Spring's
            // ReactiveAdapterRegistry, not Reactor's type.
            Flow.Publisher<Integer> result = service.flowOf("g");
            assertThat(probe.exists("lock:{g}")).isFalse();
            assertThat(service.invocations()).isZero();

            List<Boolean> heldAtEachElement = JdkFlowAdapter.flowPublisherToFlux(result)
                .map(element -> probe.exists("lock:{g}"))
                .collectList()
                .block(PATIENCE);

            assertThat(heldAtEachElement).hasSize(3).containsOnly(true);
            assertThat(service.invocations()).isOne();
            await().atMost(PATIENCE).until(() -> !probe.exists("lock:{g}"));
        });
    }

    @Test
    void aSkippedCallOfAnAdaptedReactiveTypeIsItsEmptyValue() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            LockHandle other = context.getBean(LockService.class)
                .lock(LockRequest.of("busy").withTtl(Duration.ofSeconds(10)).withWaitTime(Duration.ZERO));
            try {
                List<String> elements = JdkFlowAdapter.flowPublisherToFlux(service.skippedFlow())
                    .collectList()
                    .block(PATIENCE);

                assertThat(elements).isEmpty();
                assertThat(service.invocations()).isZero();
            }
            finally {
                other.release();
            }
        });
    }

    @Test
    void errorReleasesTheLockAndReachesTheSubscriber() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            IllegalStateException failure = new IllegalStateException("downstream failed");

            assertThatThrownBy(() -> service.failing("f", failure).block(PATIENCE)).isSameAs(failure);

            await().atMost(PATIENCE).until(() -> !context.getBean(LockProbe.class).exists("lock:{f}"));
        });
    }

    @Test
    void lockHeldElsewhereFailsThePublisherOrSkipsOrFallsBackWithoutInvokingTheMethod() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            LockHandle other = context.getBean(LockService.class)
                .lock(LockRequest.of("busy").withTtl(Duration.ofSeconds(10)).withWaitTime(Duration.ZERO));
            try {
                assertThatThrownBy(() -> service.busy().block(PATIENCE)).isInstanceOf(LockTimeoutException.class);
                assertThat(service.skipped().block(PATIENCE)).isNull();
                assertThat(service.skippedMany().collectList().block(PATIENCE)).isEmpty();
                assertThat(service.withFallback().block(PATIENCE)).isEqualTo("cached");
                assertThat(service.invocations()).isZero();
            }
            finally {
                other.release();
            }
        });
    }

    @Test
    void leaseLostBeforeCompletionEndsTheMonoWithLockLostException() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            CompletableFuture<String> result = service.controlled("g").toFuture();
            await().atMost(PATIENCE).until(() -> context.getBean(LockProbe.class).exists("lock:{g}"));

            redis.server().del("lock:{g}");
            await().atMost(PATIENCE).until(() -> context.getBean(LostLeases.class).lost("g"));
            service.sink("g").tryEmitValue("done anyway");

            assertThatThrownBy(() -> result.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("'g'");
        });
    }

    @Test
    void interruptCancelsThePublisherAndEndsItWithLockLostExceptionWhenTheLeaseIsLost() {
        runner().run(context -> {
            ReactiveService service = context.getBean(ReactiveService.class);
            CompletableFuture<String> result = service.interruptible("h").toFuture();
            await().atMost(PATIENCE).until(() -> context.getBean(LockProbe.class).exists("lock:{h}"));

            redis.server().del("lock:{h}");

            assertThatThrownBy(() -> result.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("INTERRUPT");
            await("the method's publisher is cancelled").atMost(PATIENCE)
                .until(() -> service.sink("h").currentSubscriberCount() == 0);
        });
    }

    /**
     * The key stays present for {@code period} and another owner cannot take it
     * meanwhile.
     */
    private static void assertHeldFor(ApplicationContext context, String key, Duration period) {
        LockProbe probe = context.getBean(LockProbe.class);
        LockService lockService = context.getBean(LockService.class);
        await().during(period)
            .atMost(period.plus(PATIENCE))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> probe.exists("lock:{" + key + "}") && lockService.tryLock(key, null, Duration.ZERO).isEmpty());
    }

    static class ReactiveService {

        private final AtomicInteger invocations = new AtomicInteger();

        private final Map<String, Sinks.One<String>> sinks = new ConcurrentHashMap<>();

        public int invocations() {
            return invocations.get();
        }

        public Sinks.One<String> sink(String id) {
            return sinks.computeIfAbsent(id, k -> Sinks.one());
        }

        @DistributedLock(key = "#id", ttl = "500ms", waitTime = "0s")
        public Mono<String> delayed(String id, Duration delay) {
            invocations.incrementAndGet();
            return Mono.delay(delay).thenReturn("done " + id);
        }

        @DistributedLock(key = "#id", ttl = "500ms", waitTime = "0s")
        public Mono<String> never(String id) {
            return Mono.never();
        }

        @DistributedLock(key = "#id", ttl = "500ms", waitTime = "0s")
        public Flux<Long> ticks(String id) {
            return Flux.interval(Duration.ofMillis(250)).take(5);
        }

        @DistributedLock(key = "#id", waitTime = "0s")
        public Mono<String> failing(String id, RuntimeException failure) {
            return Mono.delay(Duration.ofMillis(50)).then(Mono.error(failure));
        }

        @DistributedLock(key = "#id", ttl = "500ms", waitTime = "0s")
        public Mono<String> controlled(String id) {
            invocations.incrementAndGet();
            return sink(id).asMono();
        }

        @DistributedLock(key = "#id", ttl = "500ms", waitTime = "0s", onLeaseLost = LeaseLostAction.INTERRUPT)
        public Mono<String> interruptible(String id) {
            return sink(id).asMono();
        }

        @DistributedLock(key = "'busy'", waitTime = "0s")
        public Mono<String> busy() {
            invocations.incrementAndGet();
            return Mono.just("ran");
        }

        @DistributedLock(key = "'queued'", waitTime = "5s")
        public Mono<String> waiting() {
            invocations.incrementAndGet();
            return Mono.just("ran");
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public Mono<String> skipped() {
            invocations.incrementAndGet();
            return Mono.just("ran");
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public Flux<String> skippedMany() {
            invocations.incrementAndGet();
            return Flux.just("ran");
        }

        @DistributedLock(key = "#id", ttl = "500ms", waitTime = "0s")
        public Flow.Publisher<Integer> flowOf(String id) {
            invocations.incrementAndGet();
            return JdkFlowAdapter.publisherToFlowPublisher(Flux.range(1, 3));
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public Flow.Publisher<String> skippedFlow() {
            invocations.incrementAndGet();
            return JdkFlowAdapter.publisherToFlowPublisher(Flux.just("ran"));
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", failureHandler = "cachedPrice")
        public Mono<String> withFallback() {
            invocations.incrementAndGet();
            return Mono.just("ran");
        }

    }

}
