package io.github.distlock.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import io.github.distlock.DistributedLock;
import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAnnotationAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * Measures how often the ShedLock migration page's "skip if locked" recipe runs a short
 * scheduled job on both of two instances that share one clock: two application contexts
 * on one real Redis, each with its own scheduler firing the same cron every second. A
 * measurement, not a check (the rate depends on the machine's scheduling jitter), so it
 * runs only when asked:
 *
 * <pre>
 * ./mvnw -B -q -pl lock-spring-boot-autoconfigure -am verify -Dtest=SkipIfLockedDoubleRunMeasurement \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Ddocs.measure=true
 * </pre>
 *
 * It prints, for each job length, on how many of the ticks both instances ran the job.
 */
@EnabledIfSystemProperty(named = "docs.measure", matches = "true")
class SkipIfLockedDoubleRunMeasurement {

    private static final int TICKS = 29;

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    /** Per second of the wall clock: the instances that ran the job in it. */
    static final Map<Long, List<String>> RUNS = new ConcurrentHashMap<>();

    /** How long the job works, in microseconds. */
    static volatile long jobMicros;

    @ParameterizedTest(name = "a job of {0} us")
    @ValueSource(longs = { 0, 1_000, 10_000 })
    void bothInstancesRunTheJobOnSomeTicks(long micros) {
        RUNS.clear();
        jobMicros = micros;
        ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS,
                    DistributedLockAutoConfiguration.class, DistributedLockAnnotationAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port(), "distributed-lock.operation-timeout=10s")
            .withUserConfiguration(Scheduling.class);
        runner.withBean(NightlyJob.class, () -> new NightlyJob("a"))
            .run(a -> runner.withBean(NightlyJob.class, () -> new NightlyJob("b")).run(b -> {
                long first = TimeUnit.MILLISECONDS.toSeconds(System.currentTimeMillis()) + 2;
                await().atMost(Duration.ofSeconds(TICKS + 30))
                    .until(() -> RUNS.keySet().stream().filter(second -> second >= first).count() >= TICKS + 1);
                List<Long> ticks = RUNS.keySet()
                    .stream()
                    .filter(second -> second >= first)
                    .sorted()
                    .limit(TICKS)
                    .toList();
                long both = ticks.stream().filter(second -> RUNS.get(second).size() > 1).count();
                System.out.printf("job of %d us: both instances ran on %d of %d ticks%n", micros, both, ticks.size());
                assertThat(ticks).hasSize(TICKS);
            }));
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class Scheduling {

    }

    /** The page's recipe, on a cron that fires every second instead of every night. */
    static class NightlyJob {

        private final String instance;

        NightlyJob(String instance) {
            this.instance = instance;
        }

        @Scheduled(cron = "* * * * * *")
        @DistributedLock(key = "'nightly-report'", ttl = "10m", waitTime = "0s", onFailure = FailureAction.SKIP)
        public void nightlyReport() {
            long second = TimeUnit.MILLISECONDS.toSeconds(System.currentTimeMillis());
            RUNS.computeIfAbsent(second, key -> new CopyOnWriteArrayList<>()).add(instance);
            if (jobMicros > 0) {
                // The job's own work, stood in for by parking: the lock is held
                // meanwhile.
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(jobMicros));
            }
        }

    }

}
