package io.github.distlock.sample.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.github.distlock.sample.report.ReportSchedule;
import io.github.distlock.sample.report.ScheduledReport;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * {@code --demo=scheduled}: three instances schedule the same report every second; the
 * report's {@code @DistributedLock} (try once, skip when busy, a minimum hold) lets one
 * of them run it per period. The table shows which instance ran each period.
 */
final class ScheduledDemo {

    /** The demo's name for {@code --demo=<name>}. */
    static final String NAME = "scheduled";

    private static final List<String> INSTANCE_NAMES = List.of("instance-a", "instance-b", "instance-c");

    /** How late each instance's scheduler fires: clocks a little apart. */
    private static final Map<String, String> CLOCK_BEHIND = new LinkedHashMap<>();

    static {
        CLOCK_BEHIND.put("instance-a", "0ms");
        CLOCK_BEHIND.put("instance-b", "60ms");
        CLOCK_BEHIND.put("instance-c", "120ms");
    }

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);

    private ScheduledDemo() {
    }

    static int runCommand(PrintStream out, StandardEnvironment given, String[] instanceArgs) {
        int periods = given.getProperty("sample.demo.scheduled.periods", Integer.class, 8);
        Duration period = Duration.ofSeconds(1);
        Duration minHold = Duration.ofMillis(800);
        out.printf("%d instances schedule the same report every %d s (cron), for %d periods; their schedulers fire "
                + "%s late, as if their clocks were that far apart. The report is guarded by @DistributedLock("
                + "waitTime = \"0s\", onBusy = SKIP): the instance that gets the lock runs it, the others skip. "
                + "The run takes a millisecond: first without a minimum hold, then with minHold = \"%d ms\".%n%n",
                INSTANCE_NAMES.size(), period.toSeconds(), periods, String.join(" / ", CLOCK_BEHIND.values()),
                minHold.toMillis());

        Round without = round(out, "without a minimum hold", run(instanceArgs, period, Duration.ZERO, periods), period);
        Round with = round(out, "with minHold = " + minHold.toMillis() + " ms",
                run(instanceArgs, period, minHold, periods), period);
        if (with.periods() < periods - 3) {
            out.printf("%nVerdict: only %d periods ran; the schedule did not run as it should.%n", with.periods());
            return 1;
        }
        if (with.wrong() > 0) {
            out.printf("%nVerdict: with the minimum hold, %d of %d periods did not run exactly once.%n", with.wrong(),
                    with.periods());
            return 1;
        }
        out.printf(
                "%nVerdict: without a minimum hold %d of %d periods ran more than once (a quick run released the "
                        + "lock before a later scheduler fired); with it, each of the %d periods ran exactly once.%n",
                without.wrong(), without.periods(), with.periods());
        return 0;
    }

    private record Round(int periods, int wrong) {
    }

    private static Round round(PrintStream out, String title, Map<Long, List<String>> runs, Duration period) {
        DemoTable table = new DemoTable().left("period (UTC)").left("ran on").right("runs");
        int wrong = 0;
        int count = 0;
        if (!runs.isEmpty()) {
            TreeMap<Long, List<String>> sorted = new TreeMap<>(runs);
            for (long p = sorted.firstKey(); p <= sorted.lastKey(); p++) {
                List<String> ranOn = sorted.getOrDefault(p, List.of());
                table.row(TIME.format(Instant.ofEpochMilli(p * period.toMillis())),
                        ranOn.isEmpty() ? "(none)" : String.join(", ", ranOn), ranOn.size());
                count++;
                if (ranOn.size() != 1) {
                    wrong++;
                }
            }
        }
        out.printf("%s:%n%n%s%n", title, table);
        return new Round(count, wrong);
    }

    /**
     * Starts the instances with the report on, lets them run for {@code periods}, stops
     * them and reads what ran.
     * @return the instances that ran each period, by period number
     */
    static Map<Long, List<String>> run(String[] args, Duration period, Duration minHold, int periods) {
        List<ConfigurableApplicationContext> instances = new ArrayList<>();
        try {
            for (String name : INSTANCE_NAMES) {
                Map<String, Object> properties = Map.of("sample.scheduled-report.enabled", "true",
                        "sample.scheduled-report.period", period.toMillis() + "ms", "sample.scheduled-report.cron",
                        "* * * * * *", "sample.scheduled-report.min-hold", minHold.toMillis() + "ms",
                        "sample.scheduled-report.clock-behind", CLOCK_BEHIND.get(name));
                instances.add(DemoInstances.start(name, properties, args));
            }
            StringRedisTemplate redis = instances.get(0).getBean(StringRedisTemplate.class);
            // Runs before every instance was up are not part of the demo.
            redis.delete(ScheduledReport.RUNS_KEY);
            sleep(period.multipliedBy(periods));
            instances.forEach((instance) -> instance.getBean(ReportSchedule.class).stop());
            // A run already past its check finishes before the lock service closes.
            sleep(Duration.ofMillis(500));
        }
        finally {
            for (int i = instances.size() - 1; i >= 1; i--) {
                instances.get(i).close();
            }
        }
        ConfigurableApplicationContext last = instances.get(0);
        try {
            StringRedisTemplate redis = last.getBean(StringRedisTemplate.class);
            Map<Long, List<String>> runs = new TreeMap<>();
            List<String> entries = redis.opsForList().range(ScheduledReport.RUNS_KEY, 0, -1);
            for (String entry : (entries != null) ? entries : List.<String>of()) {
                String[] parts = entry.split(" ");
                runs.computeIfAbsent(Long.parseLong(parts[0]), (p) -> new ArrayList<>()).add(parts[1]);
            }
            // The first and the last period may be cut by the start and the stop.
            if (runs.size() > 2) {
                ((TreeMap<Long, List<String>>) runs).pollFirstEntry();
                ((TreeMap<Long, List<String>>) runs).pollLastEntry();
            }
            redis.delete(ScheduledReport.RUNS_KEY);
            return runs;
        }
        finally {
            last.close();
        }
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

}
