package io.github.distlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.contract.ContractApplication;
import io.github.distlock.contract.LockKeyspace;
import io.github.distlock.contract.RedisContractStore;
import io.github.distlock.contract.StandaloneRedis;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code @SchedulerLock} code, unchanged, on the auto-configured provider: two application
 * instances on one real Redis, each with the same ShedLock-guarded methods, called directly
 * ({@code interceptMode = PROXY_METHOD}) so that the test decides when each instance runs.
 */
class SchedulerLockApplicationTest {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    private static StandaloneRedis redis;

    private static RedisContractStore store;

    private static ContractApplication first;

    private static ContractApplication second;

    @BeforeAll
    static void start() {
        redis = StandaloneRedis.start();
        store = new RedisContractStore(redis, LockKeyspace.SINGLE_REDIS);
        first = ContractApplication.start(store.applicationProperties(), Jobs.class);
        second = ContractApplication.start(store.applicationProperties(), Jobs.class);
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable closeable : new AutoCloseable[] { first, second, store }) {
            if (closeable != null) {
                try {
                    closeable.close();
                }
                catch (Exception ex) {
                    // the next one still closes
                }
            }
        }
    }

    @Test
    void whileOneInstanceRunsTheJobTheOtherSkipsItAndTheJobSeesItsLockHandle() throws Exception {
        Report running = first.bean(Report.class);
        Report skipped = second.bean(Report.class);
        CompletableFuture<Void> firstRun = CompletableFuture.runAsync(running::blockingRun);
        assertThat(running.started.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();

        assertThat(store.isHeld("blocking-report")).isTrue();
        assertThat(running.fencingToken.get()).as("the handle's fencing token, seen inside the job").isPositive();
        skipped.blockingRun();
        assertThat(skipped.runs.get()).as("the second instance skipped the job").isZero();

        running.finish.countDown();
        firstRun.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(running.runs.get()).isEqualTo(1);
        assertThat(store.isHeld("blocking-report")).isFalse();
        assertThat(ShedLockHandles.current()).as("nothing left on the calling thread").isEmpty();
    }

    @Test
    void lockAtLeastForKeepsAQuickJobFromRunningAgainOnAnotherInstanceUntilItHasPassed() {
        Report one = first.bean(Report.class);
        Report other = second.bean(Report.class);
        one.quickRun();
        assertThat(one.quickRuns.get()).isEqualTo(1);
        assertThat(store.isHeld("quick-report")).as("held past the job's end: lockAtLeastFor").isTrue();

        other.quickRun();
        assertThat(other.quickRuns.get()).as("within lockAtLeastFor, skipped").isZero();

        await().atMost(PATIENCE).untilAsserted(() -> {
            other.quickRun();
            assertThat(other.quickRuns.get()).isEqualTo(1);
        });
    }

    @Test
    void withRedisUnreachableTheJobDoesNotRunAndTheCallFailsWithTheCause() {
        Report report = first.bean(Report.class);
        redis.server().pause();
        try {
            assertThatThrownBy(report::unreachableRun).isInstanceOf(LockBackendException.class);
            assertThat(report.unreachableRuns.get()).as("nothing ran unguarded").isZero();
        }
        finally {
            redis.server().resume();
        }
        await().atMost(PATIENCE).ignoreExceptions().untilAsserted(() -> {
            report.unreachableRun();
            assertThat(report.unreachableRuns.get()).isEqualTo(1);
        });
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(ShedLockAutoConfiguration.class)
    @EnableSchedulerLock(interceptMode = EnableSchedulerLock.InterceptMode.PROXY_METHOD, defaultLockAtMostFor = "30s")
    static class Jobs {

        @Bean
        Report report() {
            return new Report();
        }

    }

    /** A scheduled job's bean; its methods would carry {@code @Scheduled} in an application. */
    static class Report {

        final CountDownLatch started = new CountDownLatch(1);

        final CountDownLatch finish = new CountDownLatch(1);

        final AtomicInteger runs = new AtomicInteger();

        final AtomicLong fencingToken = new AtomicLong();

        final AtomicInteger quickRuns = new AtomicInteger();

        final AtomicInteger unreachableRuns = new AtomicInteger();

        @SchedulerLock(name = "blocking-report")
        public void blockingRun() {
            this.runs.incrementAndGet();
            this.fencingToken.set(ShedLockHandles.current().map(LockHandle::fencingToken).orElse(-1L));
            this.started.countDown();
            try {
                this.finish.await(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }

        @SchedulerLock(name = "quick-report", lockAtMostFor = "10s", lockAtLeastFor = "2s")
        public void quickRun() {
            this.quickRuns.incrementAndGet();
        }

        @SchedulerLock(name = "unreachable-report")
        public void unreachableRun() {
            this.unreachableRuns.incrementAndGet();
        }

    }

}
