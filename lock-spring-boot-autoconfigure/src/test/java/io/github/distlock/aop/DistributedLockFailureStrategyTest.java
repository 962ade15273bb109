package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.DistributedLock;
import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockFailureHandler;
import io.github.distlock.LockFailureHandler.LockFailure;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * What a call returns when its lock cannot be had, because another owner holds it or
 * Redis is down: by default it throws; {@code onFailure = SKIP} returns an empty value of
 * the return type; a {@code failureHandler} bean decides. In no case is the method
 * invoked.
 */
class DistributedLockFailureStrategyTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private final List<LockFailure> failures = new CopyOnWriteArrayList<>();

    @AfterEach
    void restartRedisIfATestLeftItStopped() {
        if (!redis.server().isRunning()) {
            redis.server().restart();
        }
    }

    private ApplicationContextRunner runner() {
        LockFailureHandler recordingFallback = failure -> {
            failures.add(failure);
            return "fallback for " + failure.key();
        };
        return LockTestContexts.runner(redis.server())
            .withPropertyValues("distributed-lock.operation-timeout=300ms")
            .withBean("recordingFallback", LockFailureHandler.class, () -> recordingFallback)
            .withBean("minusOne", LockFailureHandler.class, () -> failure -> {
                failures.add(failure);
                return -1;
            })
            .withBean("nothing", LockFailureHandler.class, () -> failure -> {
                failures.add(failure);
                return null;
            })
            .withBean("rejecting", LockFailureHandler.class, () -> failure -> {
                throw new IOException("no fallback for " + failure.key());
            })
            .withBean("wrongType", LockFailureHandler.class, () -> failure -> 42)
            // A new instance per look-up, so that the number of instances counts the
            // look-ups.
            .withBean("perLookUp", CountingHandler.class, CountingHandler::new,
                    definition -> definition.setScope(BeanDefinition.SCOPE_PROTOTYPE))
            .withBean(SkippingService.class)
            .withBean(HandledService.class);
    }

    @Test
    void skipReturnsEmptyValuesOfEachReturnTypeWithoutInvokingTheMethodWhileAnotherOwnerHoldsTheLock() {
        runner().run(context -> LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
            SkippingService service = context.getBean(SkippingService.class);

            service.voidCall(); // returns normally
            assertThat(service.intCall()).isZero();
            assertThat(service.booleanCall()).isFalse();
            assertThat(service.charCall()).isEqualTo('\0');
            assertThat(service.longCall()).isZero();
            assertThat(service.doubleCall()).isZero();
            assertThat(service.stringCall()).isNull();
            assertThat(service.optionalCall()).isEmpty();
            assertThat(service.listCall()).isEmpty();
            assertThat(service.setCall()).isEmpty();
            assertThat(service.mapCall()).isEmpty();
            assertThat(service.collectionCall()).isEmpty();
            assertThat(service.arrayListCall()).isEmpty();
            assertThat(service.arrayListCall()).isNotSameAs(service.arrayListCall()); // fresh,
                                                                                      // so
                                                                                      // it
                                                                                      // may
                                                                                      // be
                                                                                      // added
                                                                                      // to
            assertThat(service.streamCall()).isEmpty();
            assertThat(service.arrayCall()).isEmpty();
            assertThat(service.futureCall()).isCompletedWithValue(null);
            assertThat(service.invocations()).isZero();
        }));
    }

    @Test
    void skipReturnsEmptyValuesWhenRedisIsDown() {
        runner().run(context -> {
            SkippingService service = context.getBean(SkippingService.class);
            redis.server().stop();

            service.voidCall();
            assertThat(service.intCall()).isZero();
            assertThat(service.booleanCall()).isFalse();
            assertThat(service.optionalCall()).isEmpty();
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void theDefaultThrowsTheTimeoutWithoutInvokingTheMethod() {
        runner().run(context -> LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
            SkippingService service = context.getBean(SkippingService.class);

            assertThatThrownBy(service::throwingCall).isInstanceOf(LockTimeoutException.class);
            assertThat(service.invocations()).isZero();
        }));
    }

    @Test
    void failureHandlerGetsTheMethodArgumentsKeyAndTimeoutAndItsValueIsReturned() {
        runner().run(context -> LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
            HandledService service = context.getBean(HandledService.class);

            assertThat(service.quote("busy", 3)).isEqualTo("fallback for busy");

            assertThat(failures).singleElement().satisfies(failure -> {
                assertThat(failure.method())
                    .isEqualTo(HandledService.class.getMethod("quote", String.class, int.class));
                assertThat(failure.arguments()).containsExactly("busy", 3);
                assertThat(failure.key()).isEqualTo("busy");
                assertThat(failure.cause()).isInstanceOf(LockTimeoutException.class);
            });
            assertThat(service.invocations()).isZero();
        }));
    }

    @Test
    void failureHandlerGetsTheBackendFailureWhenRedisIsDown() {
        runner().run(context -> {
            HandledService service = context.getBean(HandledService.class);
            redis.server().stop();

            assertThat(service.quote("any", 1)).isEqualTo("fallback for any");

            assertThat(failures).singleElement()
                .satisfies(failure -> assertThat(failure.cause()).isInstanceOf(LockBackendException.class));
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void failureHandlerServesPrimitiveAndVoidMethods() {
        runner().run(context -> LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
            HandledService service = context.getBean(HandledService.class);

            assertThat(service.count()).isEqualTo(-1);
            service.notify("busy");

            assertThat(failures).extracting(failure -> failure.method().getName()).containsExactly("count", "notify");
            assertThat(service.invocations()).isZero();
        }));
    }

    @Test
    void failureHandlerMayThrowInsteadEvenACheckedExceptionTheMethodDeclares() {
        runner().run(context -> LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
            HandledService service = context.getBean(HandledService.class);

            assertThat(catchThrowable(service::rejected)).isInstanceOf(IOException.class)
                .hasMessage("no fallback for busy");
            assertThat(service.invocations()).isZero();
        }));
    }

    @Test
    void failureHandlerValueThatDoesNotFitTheReturnTypeFailsTheCallClearly() {
        runner().run(context -> LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
            HandledService service = context.getBean(HandledService.class);

            assertThatThrownBy(service::mistyped).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'wrongType'")
                .hasMessageContaining("mistyped(")
                .hasMessageContaining("java.lang.Integer");
        }));
    }

    @Test
    void theFailureHandlerBeanIsLookedUpOnceForAMethodNotOnEveryFailedCall() {
        CountingHandler.instances.set(0);
        runner().run(context -> LockTestContexts.whileBusyIsHeldElsewhere(context, () -> {
            HandledService service = context.getBean(HandledService.class);
            int before = CountingHandler.instances.get(); // the startup check creates
                                                          // none either, but may in
                                                          // future

            for (int i = 0; i < 3; i++) {
                assertThat(service.counted()).isEqualTo("handled");
            }

            assertThat(CountingHandler.instances.get() - before).isOne();
            assertThat(service.invocations()).isZero();
        }));
    }

    @Test
    void whenTheLockIsFreeTheMethodRunsAndNoStrategyIsAsked() {
        runner().run(context -> {
            HandledService service = context.getBean(HandledService.class);

            assertThat(service.quote("free", 1)).isEqualTo("quote free");
            assertThat(context.getBean(SkippingService.class).intCall()).isEqualTo(42);
            assertThat(failures).isEmpty();
        });
    }

    static class SkippingService {

        private final AtomicInteger invocations = new AtomicInteger();

        public int invocations() {
            return invocations.get();
        }

        private <T> T invoked(T value) {
            invocations.incrementAndGet();
            return value;
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public void voidCall() {
            invoked(null);
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public int intCall() {
            return invoked(42);
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public boolean booleanCall() {
            return invoked(true);
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public char charCall() {
            return invoked('x');
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public long longCall() {
            return invoked(7L);
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public double doubleCall() {
            return invoked(0.5);
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public String stringCall() {
            return invoked("value");
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public Optional<String> optionalCall() {
            return invoked(Optional.of("value"));
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public List<String> listCall() {
            return invoked(List.of("value"));
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public Set<String> setCall() {
            return invoked(Set.of("value"));
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public Map<String, String> mapCall() {
            return invoked(Map.of("k", "v"));
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public Collection<String> collectionCall() {
            return invoked(List.of("value"));
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public ArrayList<String> arrayListCall() {
            return invoked(new ArrayList<>(List.of("value")));
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public Stream<String> streamCall() {
            return invoked(Stream.of("value"));
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public String[] arrayCall() {
            return invoked(new String[] { "value" });
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", onFailure = FailureAction.SKIP)
        public CompletableFuture<String> futureCall() {
            return invoked(CompletableFuture.completedFuture("value"));
        }

        @DistributedLock(key = "'busy'", waitTime = "0s")
        public String throwingCall() {
            return invoked("value");
        }

    }

    static class HandledService {

        private final AtomicInteger invocations = new AtomicInteger();

        public int invocations() {
            return invocations.get();
        }

        @DistributedLock(key = "#symbol", waitTime = "0s", failureHandler = "recordingFallback")
        public String quote(String symbol, int quantity) {
            invocations.incrementAndGet();
            return "quote " + symbol;
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", failureHandler = "minusOne")
        public int count() {
            invocations.incrementAndGet();
            return 1;
        }

        @DistributedLock(key = "#recipient", waitTime = "0s", failureHandler = "nothing")
        public void notify(String recipient) {
            invocations.incrementAndGet();
        }

        /**
         * Declares the handler's checked exception; an undeclared one would reach the
         * caller wrapped by the proxy.
         */
        @DistributedLock(key = "'busy'", waitTime = "0s", failureHandler = "rejecting")
        public String rejected() throws IOException {
            invocations.incrementAndGet();
            return "value";
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", failureHandler = "wrongType")
        public String mistyped() {
            invocations.incrementAndGet();
            return "value";
        }

        @DistributedLock(key = "'busy'", waitTime = "0s", failureHandler = "perLookUp")
        public String counted() {
            invocations.incrementAndGet();
            return "value";
        }

    }

    /** Counts its instances: as a prototype bean, one per look-up. */
    static class CountingHandler implements LockFailureHandler {

        static final AtomicInteger instances = new AtomicInteger();

        CountingHandler() {
            instances.incrementAndGet();
        }

        @Override
        public Object handle(LockFailure failure) {
            return "handled";
        }

    }

}
