package io.github.distlock.benchmarks.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.harness.Arguments;
import io.github.distlock.benchmarks.harness.ContendedResult;
import io.github.distlock.benchmarks.harness.HarnessResults;
import io.github.distlock.benchmarks.harness.HarnessSettings;
import io.github.distlock.benchmarks.harness.Json;
import io.github.distlock.benchmarks.harness.RedlockPauseScenario.PauseResult;

/**
 * The page the report writes from given results, without running anything: which rows it
 * shows and whom the targets compare ours with.
 */
class ReportMainTest {

    @TempDir
    Path directory;

    @Test
    void oursOnJedisHasRowsInTheTablesButIsNeverTheBestPeerOfTheTargets() throws Exception {
        // Ours on Jedis is given the best figures of all: were it counted as a peer,
        // every target would name it.
        Path jmh = directory.resolve("jmh.json");
        ArrayNode entries = Json.MAPPER.createArrayNode();
        for (var cycles : Map
            .of(Implementation.OURS_SERVICE, new double[] { 5_000, 30_000 }, Implementation.OURS_SERVICE_JEDIS,
                    new double[] { 9_000, 90_000 }, Implementation.OURS_ANNOTATION, new double[] { 4_990, 29_900 },
                    Implementation.SI_SPIN, new double[] { 4_000, 20_000 }, Implementation.FLOOR,
                    new double[] { 5_100, 31_000 })
            .entrySet()) {
            entries.add(throughputEntry(cycles.getKey(), 1, cycles.getValue()[0]));
            entries.add(throughputEntry(cycles.getKey(), 8, cycles.getValue()[1]));
        }
        Files.writeString(jmh, Json.MAPPER.writeValueAsString(entries));
        Path harness = directory.resolve("harness.json");
        List<ContendedResult> contended = new ArrayList<>();
        contended.add(isolated(Implementation.OURS_SERVICE, 6_000, 2_000_000));
        contended.add(isolated(Implementation.OURS_SERVICE_JEDIS, 20_000, 100_000));
        contended.add(isolated(Implementation.SI_PUB_SUB, 3_000, 8_000_000));
        Json.write(harness, new HarnessResults(HarnessSettings.from(Arguments.parse("--profile=smoke")), contended,
                List.of(), List.of(), List.of(), List.of(), List.of(), 1));
        Path page = directory.resolve("benchmarks.md");

        List<String> problems = ReportMain.write(jmh, harness, page, "(test)");

        String text = Files.readString(page);
        assertThat(problems).isEmpty();
        assertThat(text)
            .contains("| uncontended ahead of every peer, 1 thread | 1.25× the fastest peer, "
                    + "Spring Integration SPIN_LOCK (4,000 cycles/s) | met |")
            .contains("| uncontended ahead of every peer, 8 threads | 1.50× the fastest peer, "
                    + "Spring Integration SPIN_LOCK (20,000 cycles/s) | met |")
            .contains("| contended (isolated) owner switches/s ≥ 1.5× best peer | 2.00× "
                    + "Spring Integration PUB_SUB_LOCK | met |")
            .contains("| contended (isolated) wait p99 ≤ ½ best peer's | 2.00 ms vs 8.00 ms "
                    + "(Spring Integration PUB_SUB_LOCK) | met |")
            .contains("| ours: LockService, Jedis | 9,000 | 1.76 |")
            .contains("| ours: LockService, Jedis | 20,000 | 20,000 |")
            .contains("`spring.data.redis.client-type=jedis`");
    }

    @Test
    void aFullPageCarriesTheRedlockPartBetweenMarkersAndARedlockOnlyRunReplacesItThere() throws Exception {
        Path jmh = redlockJmh();
        Path harness = redlockHarness(0);
        Path page = directory.resolve("benchmarks.md");

        List<String> problems = ReportMain.write(directory.resolve("no-jmh.json"), directory.resolve("no-harness.json"),
                jmh, harness, page, "(test)");

        String full = Files.readString(page);
        assertThat(problems).isEmpty();
        assertThat(full)
            .contains("| Redlock, 5 nodes: uncontended throughput ≥ 2.5× Redisson RedLock, 8 threads | 5.00× "
                    + "(10,000 vs 2,000 cycles/s) | met |")
            .contains(RedlockSection.BEGIN + "\n## 6. Redlock over 5 nodes")
            .contains(RedlockSection.END + "\n\n## Problems")
            .doesNotContain("Regenerated on its own");
        assertThat(directory.resolve("benchmarks-redlock.png")).isNotEmptyFile();

        // The next Redlock-only run, whose ours failed 3 cycles with a node paused: a
        // problem, on the page too.
        problems = ReportMain.writeRedlockOnly(jmh, redlockHarness(3), page, "(test, Redlock only)");

        String spliced = Files.readString(page);
        assertThat(problems).singleElement().asString().contains("OURS_REDLOCK (one node paused): 3 cycles failed");
        assertThat(spliced.split(java.util.regex.Pattern.quote(RedlockSection.BEGIN), -1)).hasSize(2);
        assertThat(spliced.lines().filter(line -> line.startsWith(RedlockSection.TARGET_PREFIX))).hasSize(7);
        assertThat(spliced).contains("(test, Redlock only)", "OURS_REDLOCK (one node paused): 3 cycles failed");
        assertThat(spliced.substring(0, spliced.indexOf(RedlockSection.BEGIN))
            .replaceAll("(?m)^\\| Redlock, 5 nodes: .*\\n", ""))
            .isEqualTo(full.substring(0, full.indexOf(RedlockSection.BEGIN))
                .replaceAll("(?m)^\\| Redlock, 5 nodes: .*\\n", ""));
    }

    @Test
    void redlockOnlyReportWritesMetOrMissedFromTheFiguresAndReplacesOnlyTheRedlockPartOfThePage() throws Exception {
        Path jmh = redlockJmh();
        Path harness = redlockHarness(0);
        Path page = directory.resolve("benchmarks.md");
        String before = String.join("\n", "# Benchmarks", "", "## Targets", "", "| target | measured | result |",
                "|---|---|---|", "| one node | 1.00× | met |", "", "## 5. Across JVMs", "", "kept as it was", "",
                "## Problems", "", "None.", "");
        Files.writeString(page, before);

        List<String> problems = ReportMain.writeRedlockOnly(jmh, harness, page, "(test)");

        String text = Files.readString(page);
        assertThat(problems).isEmpty();
        assertThat(text)
            .contains("| one node | 1.00× | met |\n"
                    + "| Redlock, 5 nodes: uncontended 1-thread p50 ≤ 1.5× ours on one node (same run) | 1.40× "
                    + "(280.0 µs vs 200.0 µs) | met |\n")
            .contains("| Redlock, 5 nodes: uncontended throughput ≥ 2.5× Redisson RedLock, 1 thread | 2.00× "
                    + "(2,000 vs 1,000 cycles/s) | **missed** |")
            .contains("| Redlock, 5 nodes: uncontended throughput ≥ 2.5× Redisson RedLock, 8 threads | 5.00× "
                    + "(10,000 vs 2,000 cycles/s) | met |")
            .contains("| Redlock, 5 nodes: contended (isolated) owner switches/s ≥ 2× Redisson RedLock | 3.00× "
                    + "(300 vs 100 /s) | met |")
            .contains("| Redlock, 5 nodes: one node of 5 paused, uncontended 1-thread p99 ≤ 2× healthy p99 | "
                    + "55.0× (110.0 ms vs 2.00 ms) | **missed** |")
            .contains("kept as it was\n\n" + RedlockSection.BEGIN + "\n## 6. Redlock over 5 nodes")
            .contains(RedlockSection.END + "\n\n## Problems\n\nNone.\n")
            // This test's JMH JSON says 1 fork of 1 x 1 s: short, and the page must say
            // so.
            .contains("> **Short settings (JMH 1 fork(s), not 3");
    }

    /**
     * The Redlock part's JMH results: ours as a Redlock at 1.4x ours on one node at p50,
     * 2x Redisson at 1 thread and 5x at 8 threads.
     */
    private Path redlockJmh() throws Exception {
        Path jmh = directory.resolve("redlock-jmh.json");
        ArrayNode entries = Json.MAPPER.createArrayNode();
        // Ours as a Redlock: 1.4x ours on one node at p50 (met), 2x Redisson at 1 thread
        // (missed), 5x at 8 (met).
        entries.add(throughputEntry(Implementation.OURS_SERVICE, 1, 5_000));
        entries.add(throughputEntry(Implementation.OURS_SERVICE, 8, 30_000));
        entries.add(sampleEntry(Implementation.OURS_SERVICE, 200));
        entries.add(throughputEntry(Implementation.OURS_REDLOCK, 1, 2_000));
        entries.add(throughputEntry(Implementation.OURS_REDLOCK, 8, 10_000));
        entries.add(sampleEntry(Implementation.OURS_REDLOCK, 280));
        entries.add(throughputEntry(Implementation.REDISSON_REDLOCK, 1, 1_000));
        entries.add(throughputEntry(Implementation.REDISSON_REDLOCK, 8, 2_000));
        entries.add(sampleEntry(Implementation.REDISSON_REDLOCK, 900));
        Files.writeString(jmh, Json.MAPPER.writeValueAsString(entries));
        return jmh;
    }

    /**
     * The Redlock part's harness results: ours 3x Redisson's owner switches, and p99 55x
     * healthy with a node paused, with {@code failedCycles} failed cycles.
     */
    private Path redlockHarness(long failedCycles) {
        Path harness = directory.resolve("redlock-harness.json");
        PauseResult paused = new PauseResult(Implementation.OURS_REDLOCK.name(), 5, 0, 1_000, 1_000_000, 2_000_000,
                3_000_000, 100, 105_000_000, 110_000_000, 120_000_000, failedCycles,
                failedCycles == 0 ? List.of() : List.of("RedlockQuorumException"), true);
        Json.write(harness,
                new HarnessResults(
                        HarnessSettings.from(Arguments.parse("--profile=full", "--scenarios=contended,pause")),
                        List.of(isolated(Implementation.OURS_REDLOCK, 300, 4_000_000),
                                isolated(Implementation.REDISSON_REDLOCK, 100, 9_000_000)),
                        List.of(), List.of(), List.of(), List.of(paused), List.of(), 1));
        return harness;
    }

    @Test
    void aFullRunWithMicrometerShowsTheOverheadRowsAndParagraphAndAMicrometerOnlyRunReplacesOnlyThem()
            throws Exception {
        // Full run: 2 % fewer cycles/s with Micrometer at 8 threads (met), 10 % at 1
        // thread (information).
        Path jmh = directory.resolve("jmh.json");
        ArrayNode entries = Json.MAPPER.createArrayNode();
        for (var cycles : Map
            .of(Implementation.OURS_SERVICE, new double[] { 5_000, 30_000 }, Implementation.OURS_SERVICE_MICROMETER,
                    new double[] { 4_500, 29_400 }, Implementation.OURS_ANNOTATION, new double[] { 4_990, 29_900 },
                    Implementation.FLOOR, new double[] { 5_100, 31_000 })
            .entrySet()) {
            entries.add(throughputEntry(cycles.getKey(), 1, cycles.getValue()[0]));
            entries.add(throughputEntry(cycles.getKey(), 8, cycles.getValue()[1]));
        }
        Files.writeString(jmh, Json.MAPPER.writeValueAsString(entries));
        Path page = directory.resolve("benchmarks.md");
        ReportMain.write(jmh, directory.resolve("none.json"), page, "(test)");
        String full = Files.readString(page);
        assertThat(full)
            .contains("| Micrometer overhead ≤ 3 % at 8 threads (uncontended) | 2.0 % fewer cycles/s (29,400 with "
                    + "vs 30,000 cycles/s without) | met |")
            .contains("| Micrometer overhead at 1 thread (uncontended, for information) | 10.0 % fewer cycles/s "
                    + "(4,500 with vs 5,000 cycles/s without) | – |")
            .contains(MicrometerSection.BEGIN + "\n### Micrometer overhead")
            .contains(MicrometerSection.END + "\n\n## 2. Contended");

        // The Micrometer-only run: 5 % at 8 threads (missed), 1 % at 1 thread.
        Path micrometerJmh = directory.resolve("micrometer-jmh.json");
        ArrayNode only = Json.MAPPER.createArrayNode();
        only.add(throughputEntry(Implementation.OURS_SERVICE, 1, 6_000));
        only.add(throughputEntry(Implementation.OURS_SERVICE, 8, 40_000));
        only.add(throughputEntry(Implementation.OURS_SERVICE_MICROMETER, 1, 5_940));
        only.add(throughputEntry(Implementation.OURS_SERVICE_MICROMETER, 8, 38_000));
        Files.writeString(micrometerJmh, Json.MAPPER.writeValueAsString(only));

        List<String> problems = ReportMain.writeMicrometerOnly(micrometerJmh, page, "(test, Micrometer only)");

        String spliced = Files.readString(page);
        assertThat(problems).isEmpty();
        assertThat(spliced)
            .contains("| Micrometer overhead ≤ 3 % at 8 threads (uncontended) | 5.0 % fewer cycles/s (38,000 with "
                    + "vs 40,000 cycles/s without) | **missed** |")
            .contains("| Micrometer overhead at 1 thread (uncontended, for information) | 1.0 % fewer cycles/s "
                    + "(5,940 with vs 6,000 cycles/s without) | – |")
            .contains("(test, Micrometer only)")
            // This test's JMH JSON says 1 fork of 1 x 1 s: short, and the paragraph must
            // say so.
            .contains("> **Short settings (JMH 1 fork(s), not 3")
            .doesNotContain("2.0 % fewer cycles/s");
        assertThat(spliced.split(java.util.regex.Pattern.quote(MicrometerSection.BEGIN), -1)).hasSize(2);
        assertThat(spliced.lines().filter(line -> line.startsWith(MicrometerSection.TARGET_PREFIX))).hasSize(2);
        // Every other line, every other figure included, is as the full run wrote it.
        assertThat(withoutMicrometerPart(spliced)).isEqualTo(withoutMicrometerPart(full));
    }

    @Test
    void aMicrometerOnlyRunAddsItsPartToAPageWrittenBeforeItExisted() throws Exception {
        Path micrometerJmh = directory.resolve("micrometer-jmh.json");
        ArrayNode only = Json.MAPPER.createArrayNode();
        only.add(throughputEntry(Implementation.OURS_SERVICE, 1, 6_000));
        only.add(throughputEntry(Implementation.OURS_SERVICE, 8, 40_000));
        only.add(throughputEntry(Implementation.OURS_SERVICE_MICROMETER, 1, 6_000));
        only.add(throughputEntry(Implementation.OURS_SERVICE_MICROMETER, 8, 39_200));
        Files.writeString(micrometerJmh, Json.MAPPER.writeValueAsString(only));
        Path page = directory.resolve("benchmarks.md");
        Files.writeString(page,
                String.join("\n", "# Benchmarks", "", "## Targets", "", "| target | measured | result |",
                        "|---|---|---|", "| one node | 1.00× | met |", "", "## 1. Uncontended", "", "kept as it was",
                        "", "## 2. Contended", "", "## Problems", "", "None.", ""));

        ReportMain.writeMicrometerOnly(micrometerJmh, page, "(test)");

        assertThat(Files.readString(page))
            .contains("| one node | 1.00× | met |\n| Micrometer overhead ≤ 3 % at 8 threads (uncontended) | 2.0 % "
                    + "fewer cycles/s (39,200 with vs 40,000 cycles/s without) | met |\n")
            .contains("kept as it was\n\n" + MicrometerSection.BEGIN + "\n### Micrometer overhead")
            .contains(MicrometerSection.END + "\n\n## 2. Contended");
    }

    @Test
    void aMicrometerOnlyRunRefusesAResultWithoutBothImplementationsAndLeavesThePage() throws Exception {
        Path micrometerJmh = directory.resolve("micrometer-jmh.json");
        ArrayNode only = Json.MAPPER.createArrayNode();
        only.add(throughputEntry(Implementation.OURS_SERVICE, 8, 40_000));
        Files.writeString(micrometerJmh, Json.MAPPER.writeValueAsString(only));
        Path page = directory.resolve("benchmarks.md");
        Files.writeString(page, "# Benchmarks\n");

        assertThatThrownBy(() -> ReportMain.writeMicrometerOnly(micrometerJmh, page, "(test)"))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("OURS_SERVICE_MICROMETER");
        assertThat(Files.readString(page)).isEqualTo("# Benchmarks\n");
    }

    /**
     * The page without its Micrometer rows and paragraph (nor the blank line after it).
     */
    private static String withoutMicrometerPart(String page) {
        int begin = page.indexOf(MicrometerSection.BEGIN);
        int end = page.indexOf(MicrometerSection.END) + MicrometerSection.END.length() + 1;
        return (page.substring(0, begin) + page.substring(end)).replaceAll("(?m)^\\| Micrometer overhead .*\\n", "");
    }

    @Test
    void redlockOnlyReportRefusesAPageThatDoesNotExist() {
        Path page = directory.resolve("missing.md");

        assertThatThrownBy(() -> ReportMain.writeRedlockOnly(directory.resolve("none.json"),
                directory.resolve("none.json"), page, "(test)"))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("does not exist")
            .hasMessageContaining("Run the full suite first");
    }

    /** One JMH SampleTime result at 1 thread whose every sample took {@code micros}. */
    private static ObjectNode sampleEntry(Implementation implementation, double micros) {
        ObjectNode entry = Json.MAPPER.createObjectNode();
        entry.put("jmhVersion", "1.37");
        entry.put("benchmark", "io.github.distlock.benchmarks.jmh.UncontendedBenchmark.latency1");
        entry.put("mode", "sample");
        entry.put("threads", 1);
        entry.put("forks", 1);
        entry.putArray("jvmArgs").add("-Xmx1g");
        entry.putObject("params").put("implementation", implementation.name());
        ObjectNode metric = entry.putObject("primaryMetric");
        metric.put("scoreUnit", "us/op");
        metric.putArray("rawDataHistogram").addArray().addArray().addArray().add(micros).add(10);
        return entry;
    }

    /** One JMH Throughput result as JmhMain writes it: one fork, one iteration. */
    private static ObjectNode throughputEntry(Implementation implementation, int threads, double cyclesPerSecond) {
        ObjectNode entry = Json.MAPPER.createObjectNode();
        entry.put("jmhVersion", "1.37");
        entry.put("benchmark", "io.github.distlock.benchmarks.jmh.UncontendedBenchmark.throughput" + threads);
        entry.put("mode", "thrpt");
        entry.put("threads", threads);
        entry.put("forks", 1);
        entry.putArray("jvmArgs").add("-Xmx1g");
        entry.put("warmupIterations", 1);
        entry.put("warmupTime", "1 s");
        entry.put("measurementIterations", 1);
        entry.put("measurementTime", "1 s");
        entry.putObject("params").put("implementation", implementation.name());
        ObjectNode metric = entry.putObject("primaryMetric");
        metric.put("score", cyclesPerSecond);
        metric.put("scoreError", Double.NaN);
        metric.put("scoreUnit", "ops/s");
        metric.putArray("rawData").addArray().add(cyclesPerSecond);
        return entry;
    }

    /** A contended isolated run in which every acquisition changed owner. */
    private static ContendedResult isolated(Implementation implementation, long switchesPerSecond, long waitP99Nanos) {
        long[] perThread = new long[8];
        java.util.Arrays.fill(perThread, switchesPerSecond / 8);
        return new ContendedResult(implementation.name(), "isolated", 1, 8, 1.0, switchesPerSecond, switchesPerSecond,
                perThread, waitP99Nanos / 2, waitP99Nanos, waitP99Nanos * 2, switchesPerSecond, switchesPerSecond, 0, 0,
                List.of(), "");
    }

}
