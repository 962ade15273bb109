package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.DistributedLock;
import io.github.distlock.LockService;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.memory.InMemoryLockBackend;

/**
 * {@code @DistributedLock(minHold = ...)} in an application: kept on a backend that can
 * shorten a lease, and refused at startup, naming the method, when it is longer than the
 * ttl or when the lock service cannot keep it. The in-memory backend is the store; no
 * Redis is on the class path.
 */
class MinHoldAnnotationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                DistributedLockAnnotationAutoConfiguration.class))
        .withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "io.lettuce",
                "io.github.distlock.redis.", "io.github.distlock.redlock."));

    @Test
    void aMethodWithAMinimumHoldLeavesItsLockHeldAfterItReturnsSoTheNextTickIsSkipped() {
        runner.withUserConfiguration(InMemoryLocks.class).withBean(Job.class, HourlyJob::new).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(LockService.class).supportsMinHold()).isTrue();
            InMemoryLockBackend store = context.getBean(InMemoryLockBackend.class);
            Job job = context.getBean(Job.class);

            assertThat(job.run()).as("ran").isEqualTo(1);
            assertThat(store.heldLocks()).as("held after the method returned").containsExactly("hourly");
            assertThat(store.inspect(store.lockKey("hourly")).leaseLeftMillis()).isBetween(1L, 60_000L);
            assertThat(job.run()).as("another tick within the minimum hold: skipped").isZero();
        });
    }

    @Test
    void aMinimumHoldLongerThanTheTtlFailsTheStartupNamingTheMethodAndTheFix() {
        runner.withUserConfiguration(InMemoryLocks.class).withBean(Job.class, TooLongJob::new).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("TooLongJob.run")
                .hasStackTraceContaining("minHold")
                .hasStackTraceContaining("\"2m\"")
                .hasStackTraceContaining("is longer than its ttl (1m)")
                .hasStackTraceContaining("ttl = \"2m\"");
        });
    }

    @Test
    void aMinimumHoldLongerThanTheDefaultTtlFailsTheStartupNamingTheProperty() {
        runner.withUserConfiguration(InMemoryLocks.class)
            .withPropertyValues("distributed-lock.default-ttl=30s")
            .withBean(Job.class, NoTtlJob::new)
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).hasStackTraceContaining("NoTtlJob.run")
                    .hasStackTraceContaining("distributed-lock.default-ttl (30s)");
            });
    }

    @Test
    void aMinimumHoldOnABackendThatCannotShortenALeaseFailsTheStartupNamingTheMethod() {
        runner.withUserConfiguration(PlainLocks.class).withBean(Job.class, HourlyJob::new).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("HourlyJob.run")
                .hasMessageContaining("supportsMinHold() is false")
                .hasMessageContaining("LeaseAdjustingLockBackend");
        });
    }

    @Test
    void aBackendThatCannotShortenALeaseStartsWhenNoMethodAsksForAMinimumHold() {
        runner.withUserConfiguration(PlainLocks.class).withBean(Job.class, PlainJob::new).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(LockService.class).supportsMinHold()).isFalse();
            assertThat(context.getBean(Job.class).run()).isEqualTo(1);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class InMemoryLocks {

        @Bean
        InMemoryLockBackend lockBackend() {
            return new InMemoryLockBackend();
        }

    }

    /** An application's own backend with the four base operations only. */
    @Configuration(proxyBeanMethods = false)
    static class PlainLocks {

        @Bean
        LockBackend lockBackend() {
            return new PlainBackend(new InMemoryLockBackend());
        }

    }

    /**
     * Public, and an interface: the proxy is then a JDK one, which the filtering class
     * loader allows.
     */
    public interface Job {

        int run();

    }

    public static class HourlyJob implements Job {

        private int runs;

        @Override
        @DistributedLock(key = "'hourly'", ttl = "10m", minHold = "1m", waitTime = "0s",
                onFailure = DistributedLock.FailureAction.SKIP)
        public int run() {
            return ++runs;
        }

    }

    public static class TooLongJob implements Job {

        @Override
        @DistributedLock(key = "'too-long'", ttl = "1m", minHold = "2m")
        public int run() {
            return 1;
        }

    }

    public static class NoTtlJob implements Job {

        @Override
        @DistributedLock(key = "'no-ttl'", minHold = "1m")
        public int run() {
            return 1;
        }

    }

    public static class PlainJob implements Job {

        private int runs;

        @Override
        @DistributedLock(key = "'plain'", waitTime = "0s")
        public int run() {
            return ++runs;
        }

    }

    /** Only {@link LockBackend}: an {@code instanceof} check for a capability fails. */
    static final class PlainBackend implements LockBackend {

        private final InMemoryLockBackend store;

        PlainBackend(InMemoryLockBackend store) {
            this.store = store;
        }

        @Override
        public LockKey lockKey(String name) {
            return store.lockKey(name);
        }

        @Override
        public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
            return store.tryAcquire(key, token, ttlMillis);
        }

        @Override
        public boolean release(LockKey key, String token) {
            return store.release(key, token);
        }

        @Override
        public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
            store.renew(renewals, outcomes);
        }

    }

}
