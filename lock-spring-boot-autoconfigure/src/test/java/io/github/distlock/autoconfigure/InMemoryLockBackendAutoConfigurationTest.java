package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.DistributedLock;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.memory.InMemoryLockBackend;

/**
 * The in-memory backend as the guide tells users to switch a test context to it: a
 * {@code LockBackend} bean. No Redis runs, and Spring Data Redis and lock-redis are not
 * even on the class path.
 */
class InMemoryLockBackendAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                DistributedLockAnnotationAutoConfiguration.class))
        .withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "io.lettuce",
                "io.github.distlock.redis.", "io.github.distlock.redlock."))
        .withUserConfiguration(InMemoryLocks.class)
        .withBean(Counter.class, CountingService::new);

    @Test
    void anInMemoryBackendBeanServesTheLockServiceAndTheAnnotationWithoutRedis() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            InMemoryLockBackend backend = context.getBean(InMemoryLockBackend.class);
            assertThat(context.getBean(LockBackend.class)).isSameAs(backend);

            Counter counter = context.getBean(Counter.class);
            assertThat(counter.increment("a")).isEqualTo(1);
            try (LockHandle held = context.getBean(LockService.class)
                .lock("counter:a", Duration.ofSeconds(30), Duration.ZERO)) {
                assertThat(backend.heldLocks()).containsExactly("counter:a");
                assertThat(counter.increment("a")).as("busy: skipped, zero returned").isZero();
            }
            assertThat(counter.increment("a")).isEqualTo(2);
            assertThat(backend.heldLocks()).isEmpty();
        });
    }

    @Test
    void theLockServiceHandsItsWaitersToTheBackendSoThatAReleaseWakesThem() {
        runner.run(context -> {
            InMemoryLockBackend backend = context.getBean(InMemoryLockBackend.class);
            assertThat(backend).extracting("deliveries")
                .asInstanceOf(InstanceOfAssertFactories.LIST)
                .containsExactly(context.getBean(LockWaiters.class));

            LockService locks = context.getBean(LockService.class);
            LockHandle held = locks.lock("order:42", Duration.ofSeconds(30), Duration.ZERO);
            CompletableFuture<Optional<LockHandle>> waiter = CompletableFuture.supplyAsync(() -> locks.tryLock(
                    LockRequest.of("order:42").withTtl(Duration.ofSeconds(30)).withWaitTime(Duration.ofMinutes(1))));
            await().until(() -> backend.inspect(backend.lockKey("order:42")).queueLength() == 1);
            held.release();

            LockHandle next = waiter.get(1, TimeUnit.MINUTES).orElseThrow();
            assertThat(next.isHeld()).isTrue();
            next.release();
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class InMemoryLocks {

        @Bean
        InMemoryLockBackend lockBackend() {
            return new InMemoryLockBackend();
        }

    }

    /**
     * Public, and an interface: the proxy is then a JDK one, which the filtering class
     * loader allows.
     */
    public interface Counter {

        int increment(String name);

    }

    public static class CountingService implements Counter {

        private int count;

        @Override
        @DistributedLock(key = "'counter:' + #name", waitTime = "0s", onBusy = DistributedLock.FailureAction.SKIP)
        public int increment(String name) {
            return ++count;
        }

    }

}
