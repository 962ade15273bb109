package io.github.distlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

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
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code @SchedulerLock} code, unchanged, on the auto-configured provider: two
 * application instances on one real Redis, each with the same ShedLock-guarded methods,
 * called directly ({@code interceptMode = PROXY_METHOD}) so that the test decides when
 * each instance runs.
 */
@ExtendWith(OutputCaptureExtension.class)
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
        JobState running = first.bean(JobState.class);
        JobState skipped = second.bean(JobState.class);
        CompletableFuture<Void> firstRun = CompletableFuture.runAsync(first.bean(Report.class)::blockingRun);
        assertThat(running.started.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();

        assertThat(store.isHeld("blocking-report")).isTrue();
        assertThat(running.fencingToken.get()).as("the handle's fencing token, seen inside the job").isPositive();
        second.bean(Report.class).blockingRun();
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
        assertThat(first.bean(JobState.class).quickRuns.get()).isEqualTo(1);
        assertThat(store.isHeld("quick-report")).as("held past the job's end: lockAtLeastFor").isTrue();

        other.quickRun();
        assertThat(second.bean(JobState.class).quickRuns.get()).as("within lockAtLeastFor, skipped").isZero();

        await().atMost(PATIENCE).untilAsserted(() -> {
            other.quickRun();
            assertThat(second.bean(JobState.class).quickRuns.get()).isEqualTo(1);
        });
    }

    @Test
    void withRedisUnreachableTheJobDoesNotRunAndTheCallFailsWithTheCause() {
        Report report = first.bean(Report.class);
        redis.server().pause();
        try {
            assertThatThrownBy(report::unreachableRun).isInstanceOf(LockBackendException.class);
            assertThat(first.bean(JobState.class).unreachableRuns.get()).as("nothing ran unguarded").isZero();
        }
        finally {
            redis.server().resume();
        }
        await().atMost(PATIENCE).ignoreExceptions().untilAsserted(() -> {
            report.unreachableRun();
            assertThat(first.bean(JobState.class).unreachableRuns.get()).isEqualTo(1);
        });
    }

    @Test
    void aTaskThatOutrunsLockAtMostForIsToldWhileItRunsAndTheLossIsReportedAsEveryLostLockIs(CapturedOutput output) {
        JobState state = first.bean(JobState.class);
        first.bean(Report.class).slowRun();

        assertThat(state.slowRuns.get()).isEqualTo(1);
        assertThat(state.lostWhileRunning.get()).as("the task's own handle turned lost before the task ended").isTrue();
        assertThat(first.lostLeases()).as("one LockLostEvent, not a second one at unlock")
            .filteredOn((event) -> event.getHandle() == state.slowHandle.get())
            .singleElement()
            .satisfies((event) -> assertThat(event.getReason()).contains("fixed lease of 200 ms")
                .contains("ran out before it was released"));
        assertThat(second.lostLeases()).filteredOn((event) -> event.getHandle().key().equals("slow-report")).isEmpty();
        assertThat(output).contains("Lost distributed lock 'slow-report'");
        assertThat(store.isHeld("slow-report")).isFalse();
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(ShedLockAutoConfiguration.class)
    @EnableSchedulerLock(interceptMode = EnableSchedulerLock.InterceptMode.PROXY_METHOD, defaultLockAtMostFor = "30s")
    static class Jobs {

        @Bean
        JobState jobState() {
            return new JobState();
        }

        @Bean
        Report report(JobState state) {
            return new Report(state);
        }

    }

    /** What the jobs did, outside the proxied bean so that the test can read it. */
    static class JobState {

        final CountDownLatch started = new CountDownLatch(1);

        final CountDownLatch finish = new CountDownLatch(1);

        final AtomicInteger runs = new AtomicInteger();

        final AtomicLong fencingToken = new AtomicLong();

        final AtomicInteger quickRuns = new AtomicInteger();

        final AtomicInteger unreachableRuns = new AtomicInteger();

        final AtomicInteger slowRuns = new AtomicInteger();

        final AtomicReference<LockHandle> slowHandle = new AtomicReference<>();

        final AtomicBoolean lostWhileRunning = new AtomicBoolean();

    }

    /**
     * A scheduled job's bean; its methods would carry {@code @Scheduled} in an
     * application.
     */
    static class Report {

        private final JobState state;

        Report(JobState state) {
            this.state = state;
        }

        @SchedulerLock(name = "blocking-report")
        public void blockingRun() {
            this.state.runs.incrementAndGet();
            this.state.fencingToken.set(ShedLockHandles.current().map(LockHandle::fencingToken).orElse(-1L));
            this.state.started.countDown();
            try {
                this.state.finish.await(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }

        @SchedulerLock(name = "quick-report", lockAtMostFor = "10s", lockAtLeastFor = "2s")
        public void quickRun() {
            this.state.quickRuns.incrementAndGet();
        }

        /** Runs until its lock is reported lost, or for {@link #PATIENCE}. */
        @SchedulerLock(name = "slow-report", lockAtMostFor = "200ms")
        public void slowRun() {
            this.state.slowRuns.incrementAndGet();
            LockHandle handle = ShedLockHandles.current().orElseThrow();
            this.state.slowHandle.set(handle);
            long giveUp = System.nanoTime() + PATIENCE.toNanos();
            try {
                while (!handle.isLost() && System.nanoTime() - giveUp < 0) {
                    Thread.sleep(10);
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            this.state.lostWhileRunning.set(handle.isLost());
        }

        @SchedulerLock(name = "unreachable-report")
        public void unreachableRun() {
            this.state.unreachableRuns.incrementAndGet();
        }

    }

}
