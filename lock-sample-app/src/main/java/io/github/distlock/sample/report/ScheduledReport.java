package io.github.distlock.sample.report;

import java.time.Instant;

import io.github.distlock.DistributedLock;
import io.github.distlock.DistributedLock.FailureAction;

import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A scheduled job that every instance schedules and one instance runs per period: the
 * lock is tried once ({@code waitTime = "0s"}) and a busy lock skips the run, and the
 * minimum hold keeps an instance whose scheduler fires a little later from running the
 * same period again after a quick run has already released the lock.
 *
 * <p>
 * {@link ReportSchedule} calls it on every instance. Each run appends
 * {@code <period> <instance>} to the Redis list {@link #RUNS_KEY}, so that the
 * {@code scheduled} demo can show which instance ran each period.
 */
public class ScheduledReport {

    /** Where the runs are recorded. */
    public static final String RUNS_KEY = "sample:scheduled-report:runs";

    private final StringRedisTemplate redis;

    private final String instance;

    private final long periodMillis;

    public ScheduledReport(StringRedisTemplate redis, String instance, long periodMillis) {
        this.redis = redis;
        this.instance = instance;
        this.periodMillis = periodMillis;
    }

    @DistributedLock(key = "'scheduled-report'", ttl = "${sample.scheduled-report.ttl}",
            minHold = "${sample.scheduled-report.min-hold}", waitTime = "0s", onBusy = FailureAction.SKIP)
    public void run() {
        long period = Instant.now().toEpochMilli() / this.periodMillis;
        this.redis.opsForList().rightPush(RUNS_KEY, period + " " + this.instance);
    }

}
