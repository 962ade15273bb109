package io.github.distlock.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.distlock.testsupport.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The scheduled demo's claim: with the minimum hold, three instances whose schedulers
 * fire up to 120 ms apart run the report exactly once per period.
 */
class ScheduledDemoTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void withAMinimumHoldEachPeriodRunsExactlyOnce() {
        Map<Long, List<String>> runs = ScheduledDemo.run(
                new String[] { "--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port() },
                Duration.ofSeconds(1), Duration.ofMillis(800), 6);

        assertThat(runs).hasSizeGreaterThanOrEqualTo(3);
        long first = runs.keySet().stream().min(Long::compare).orElseThrow();
        long last = runs.keySet().stream().max(Long::compare).orElseThrow();
        for (long period = first; period <= last; period++) {
            assertThat(runs.get(period)).as("instances that ran period %d", period).hasSize(1);
        }
    }

}
