package io.github.distlock.sample.report;

import java.time.Duration;

import org.springframework.scheduling.annotation.Scheduled;

/**
 * The schedule of {@link ScheduledReport} on one instance. An instance's scheduler fires
 * {@code sample.scheduled-report.clock-behind} late, as one whose clock runs a little
 * behind the others would: the demo gives each instance a different lag.
 */
public class ReportSchedule {

    private final ScheduledReport report;

    private final Duration clockBehind;

    private volatile boolean stopped;

    public ReportSchedule(ScheduledReport report, Duration clockBehind) {
        this.report = report;
        this.clockBehind = clockBehind;
    }

    @Scheduled(cron = "${sample.scheduled-report.cron}")
    public void fire() throws InterruptedException {
        Thread.sleep(this.clockBehind.toMillis());
        if (!this.stopped) {
            this.report.run();
        }
    }

    /**
     * Fires no more: the demo stops every instance's schedule before it closes any of
     * them.
     */
    public void stop() {
        this.stopped = true;
    }

}
