package io.github.distlock.benchmarks.report;

import static io.github.distlock.benchmarks.report.ReportMain.format;
import static io.github.distlock.benchmarks.report.ReportMain.targetRow;

import java.util.ArrayList;
import java.util.List;

import io.github.distlock.benchmarks.adapter.Implementation;

/**
 * The "Micrometer overhead" part of the page: its rows of the targets table and a short
 * paragraph on how it was measured, from one JMH run holding both
 * {@link Implementation#OURS_SERVICE} and {@link Implementation#OURS_SERVICE_MICROMETER}
 * (same JVM settings, forks in rounds). The full suite takes both from its own scenario
 * 1; {@code -Dbench.only=micrometer} measures only those two and replaces only this part
 * of an existing page ({@link #splice}), so that the overhead can be re-measured on a
 * quiet machine in minutes.
 */
final class MicrometerSection {

    /** First line of the paragraph; it runs to {@link #END}. */
    static final String BEGIN = "<!-- micrometer:begin: generated from ours with and without Micrometer in one JMH "
            + "run; -Dbench.only=micrometer regenerates this paragraph and the \"Micrometer overhead\" targets "
            + "alone -->";

    private static final String BEGIN_PREFIX = "<!-- micrometer:begin";

    /** Last line of the paragraph. */
    static final String END = "<!-- micrometer:end -->";

    /**
     * How both Micrometer rows of the targets table start, so that a Micrometer-only run
     * can replace them.
     */
    static final String TARGET_PREFIX = "| Micrometer overhead ";

    /**
     * The target: at most this share of uncontended cycles/s lost to the instrumentation
     * at 8 threads.
     */
    static final double MAX_OVERHEAD = 0.03;

    private static final String WITHOUT = Implementation.OURS_SERVICE.name();

    private static final String WITH = Implementation.OURS_SERVICE_MICROMETER.name();

    private final JmhResults jmh;

    /**
     * @param jmh a JMH result holding both implementations, or not (then the rows say
     * "not measured")
     */
    MicrometerSection(JmhResults jmh) {
        this.jmh = jmh;
    }

    /**
     * Whether {@code jmh} measured ours with Micrometer at all: the full suite shows this
     * part only then.
     */
    static boolean measured(JmhResults jmh) {
        return jmh != null && jmh.cells.containsKey(WITH);
    }

    /**
     * The share of cycles per second lost with Micrometer, {@code 1 - with / without}:
     * 0.03 is 3 % fewer.
     * @param threads 1 or 8
     * @return the overhead, NaN if either was not measured
     */
    double overhead(int threads) {
        return 1 - throughput(WITH, threads) / throughput(WITHOUT, threads);
    }

    /** Both rows of the targets table, each starting with {@link #TARGET_PREFIX}. */
    List<String> targetRows() {
        List<String> rows = new ArrayList<>();
        double eight = overhead(8);
        rows.add(targetRow(TARGET_PREFIX.substring(2) + "≤ 3 % at 8 threads (uncontended)", eight, measured(8),
                eight <= MAX_OVERHEAD));
        double one = overhead(1);
        // Not a target: at one thread Redis round trips, not CPU, bound a cycle, so the
        // figure is for information.
        String row = targetRow(TARGET_PREFIX.substring(2) + "at 1 thread (uncontended, for information)", one,
                measured(1), true);
        rows.add(Double.isNaN(one) ? row : row.replace("| met |", "| – |"));
        return rows;
    }

    private String measured(int threads) {
        return format(100 * overhead(threads), 1) + " % fewer cycles/s (" + format(throughput(WITH, threads), 0)
                + " with vs " + format(throughput(WITHOUT, threads), 0) + " cycles/s without)";
    }

    /**
     * The paragraph, {@link #BEGIN} to {@link #END}.
     * @param generatedAt when a Micrometer-only run wrote it, or null within the full
     * page
     * @param command the Micrometer-only run's command, or null within the full page
     * @return its lines
     */
    List<String> section(String generatedAt, String command) {
        List<String> lines = new ArrayList<>();
        lines.add(BEGIN);
        lines.add("### Micrometer overhead");
        lines.add("");
        List<String> shortSettings = shortSettings();
        if (!shortSettings.isEmpty()) {
            lines.add("> **Short settings (" + String.join("; ", shortSettings) + "): these figures prove that the "
                    + "Micrometer run works, not what Micrometer costs. Publish only a run with the suite's full "
                    + "settings, on a quiet machine.**");
            lines.add("");
        }
        lines.add("`" + Implementation.OURS_SERVICE_MICROMETER.label() + "` is `" + Implementation.OURS_SERVICE.label()
                + "` in an application with Spring Boot's Actuator metrics and observation auto-configuration (a "
                + "`SimpleMeterRegistry`, Boot's `ObservationRegistry` and its `DefaultMeterObservationHandler`), "
                + "measured in the same JMH run as it, with the same JVM settings and forks in rounds. Overhead is "
                + "1 − with ÷ without, in uncontended cycles per second: " + format(100 * overhead(8), 1)
                + " % at 8 threads (target ≤ 3 %), " + format(100 * overhead(1), 1) + " % at 1 thread. "
                + "Redis on loopback and 8 threads saturating the cores make this the worst case: every "
                + "microsecond of client CPU is throughput. The CPU cost alone, without Redis: "
                + "`ListenerCostBenchmark` (see the benchmarks README)." + settings());
        if (command != null) {
            lines.add("");
            lines.add("Measured on its own" + (generatedAt != null ? " " + generatedAt : "") + " by:");
            lines.add("");
            lines.add("```");
            lines.add(command);
            lines.add("```");
        }
        lines.add(END);
        return lines;
    }

    /**
     * Why the JMH settings are below the suite's (3 forks, 5 × 2 s + 5 × 2 s), if they
     * are.
     */
    private List<String> shortSettings() {
        List<String> reasons = new ArrayList<>();
        if (jmh != null) {
            if (jmh.forks < 3) {
                reasons.add("JMH " + jmh.forks + " fork(s), not 3");
            }
            if (jmh.warmupIterations < 5 || jmh.measurementIterations < 5
                    || RedlockSection.jmhSeconds(jmh.warmupTime) < 2
                    || RedlockSection.jmhSeconds(jmh.measurementTime) < 2) {
                reasons.add("JMH " + jmh.warmupIterations + " × " + jmh.warmupTime + " warm-up + "
                        + jmh.measurementIterations + " × " + jmh.measurementTime + ", not 5 × 2 s + 5 × 2 s");
            }
        }
        return reasons;
    }

    private String settings() {
        if (jmh == null) {
            return "";
        }
        return " JMH: " + jmh.forks + " fork(s)" + (jmh.interleaved ? " in rounds" : "") + " × (" + jmh.warmupIterations
                + " × " + jmh.warmupTime + " warm-up + " + jmh.measurementIterations + " × " + jmh.measurementTime
                + " measurement).";
    }

    /**
     * Replaces the Micrometer part of an existing page: the paragraph between
     * {@link #BEGIN} and {@link #END} (or, on a page written before it existed, a new one
     * at the end of section 1) and the rows of the targets table that start with
     * {@link #TARGET_PREFIX}. Every other line is kept as it was.
     * @param page the page's text
     * @param section the new paragraph, {@link #BEGIN} to {@link #END}
     * @param targetRows the new rows of the targets table
     * @return the new page
     * @throws IllegalStateException if the page has no targets table or only one of the
     * markers
     */
    static String splice(String page, List<String> section, List<String> targetRows) {
        return PageParts.splice(page, "Micrometer", BEGIN_PREFIX, END, "## 2. ", section, TARGET_PREFIX, targetRows);
    }

    private double throughput(String implementation, int threads) {
        JmhResults.Cell cell = jmh == null ? null : jmh.cell(implementation, threads);
        return cell == null ? Double.NaN : cell.throughput;
    }

}
