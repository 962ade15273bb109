package io.github.distlock.benchmarks.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.adapter.Implementation.Role;
import io.github.distlock.benchmarks.adapter.OurApplication;
import io.github.distlock.benchmarks.harness.Arguments;
import io.github.distlock.benchmarks.harness.ConsensusResults;
import io.github.distlock.benchmarks.harness.ContendedResult;
import io.github.distlock.benchmarks.harness.HarnessResults;
import io.github.distlock.benchmarks.harness.HarnessSettings;
import io.github.distlock.benchmarks.harness.Json;
import io.github.distlock.benchmarks.harness.RoundTripScenario;
import io.github.distlock.benchmarks.harness.RoundTripScenario.RoundTripResult;
import io.github.distlock.benchmarks.harness.WatchdogScenario.WatchdogResult;

/**
 * Writes the benchmark page from {@code jmh.json} and {@code harness.json} (and the
 * Redlock part from {@code redlock-jmh.json} and {@code redlock-harness.json}, see
 * {@link RedlockSection}): the targets with pass/miss, one table per scenario (medians
 * over forks), the charts, the machine, the versions and the command.
 * {@code --only=redlock} replaces only the Redlock part of an existing page,
 * {@code --only=micrometer} only the Micrometer overhead rows and paragraph
 * ({@link MicrometerSection}), {@code --only=consensus} only the etcd and ZooKeeper
 * section and its targets ({@link ConsensusSection}, which a full run adds too when
 * {@code consensus-jmh.json} or {@code consensus-harness.json} exists). Exits with 1
 * after writing the page if any implementation showed a violation, lost a lease or broke,
 * so that the run fails visibly without losing its numbers.
 */
public final class ReportMain {

    private static final String OURS = Implementation.OURS_SERVICE.name();

    private static final String ANNOTATION = Implementation.OURS_ANNOTATION.name();

    private static final String FLOOR = Implementation.FLOOR.name();

    /**
     * A lock whose owner changes on fewer acquisitions than this is not compared on wait
     * times.
     */
    private static final double MIN_HANDOFF_SHARE = 0.5;

    private final JmhResults jmh;

    private final HarnessResults harness;

    /** The Redlock part, or null when its results are missing. */
    private final RedlockSection redlock;

    private final String command;

    private final StringBuilder page = new StringBuilder();

    private ReportMain(JmhResults jmh, HarnessResults harness, RedlockSection redlock, String command) {
        this.jmh = jmh;
        this.harness = harness;
        this.redlock = redlock;
        this.command = command;
    }

    /**
     * @param args
     * {@code --jmh=jmh.json --harness=harness.json --redlock-jmh=redlock-jmh.json
     *        --redlock-harness=redlock-harness.json --page=docs/benchmarks.md --command=...},
     * and {@code --only=redlock} to replace only the Redlock part of the existing page
     * ({@link #writeRedlockOnly}),
     * {@code --only=micrometer --micrometer-jmh=micrometer-jmh.json} only its Micrometer
     * part ({@link #writeMicrometerOnly})
     */
    public static void main(String[] args) {
        Arguments arguments = Arguments.parse(args);
        String command = arguments.string("command", "./mvnw -B -pl lock-benchmarks -am -Pbench -DskipTests verify");
        Path page = Path.of(arguments.string("page", "../docs/benchmarks.md"));
        Path redlockJmh = Path.of(arguments.string("redlock-jmh", "target/bench/redlock-jmh.json"));
        Path redlockHarness = Path.of(arguments.string("redlock-harness", "target/bench/redlock-harness.json"));
        Path consensusJmh = Path.of(arguments.string("consensus-jmh", "target/bench/consensus-jmh.json"));
        Path consensusHarness = Path.of(arguments.string("consensus-harness", "target/bench/consensus-harness.json"));
        String only = arguments.string("only", "all");
        List<String> problems = switch (only) {
            case "all" -> write(Path.of(arguments.string("jmh", "target/bench/jmh.json")),
                    Path.of(arguments.string("harness", "target/bench/harness.json")), redlockJmh, redlockHarness, page,
                    command);
            case "redlock" -> writeRedlockOnly(redlockJmh, redlockHarness, page, command);
            case "micrometer" -> writeMicrometerOnly(
                    Path.of(arguments.string("micrometer-jmh", "target/bench/micrometer-jmh.json")), page, command);
            case "consensus" -> writeConsensusOnly(consensusJmh, consensusHarness, page, command);
            default ->
                throw new IllegalArgumentException("--only must be all, redlock, micrometer or consensus, was " + only);
        };
        if (only.equals("all") && (Files.exists(consensusJmh) || Files.exists(consensusHarness))) {
            // The full suite runs the consensus part too; its section joins the page the
            // same way a consensus-only run puts it there.
            List<String> all = new ArrayList<>(problems);
            all.addAll(writeConsensusOnly(consensusJmh, consensusHarness, page, null));
            problems = all;
        }
        if (!problems.isEmpty()) {
            System.err.println("report: the page was written, but these must be fixed:");
            problems.forEach(problem -> System.err.println("  - " + problem));
            System.exit(1);
        }
    }

    /**
     * Writes the page and its charts (next to it, named after it).
     * @param jmhFile JMH's JSON result; may be missing
     * @param harnessFile the harness's result; may be missing
     * @param pageFile the Markdown page to write
     * @param command the command that produced the results, as shown on the page
     * @return the problems that must fail the build: violations, lost leases, broken
     * adapters
     */
    public static List<String> write(Path jmhFile, Path harnessFile, Path pageFile, String command) {
        return write(jmhFile, harnessFile, null, null, pageFile, command);
    }

    /**
     * Writes the whole page and its charts, the Redlock part included when its results
     * exist.
     * @param jmhFile JMH's JSON result; may be missing
     * @param harnessFile the harness's result; may be missing
     * @param redlockJmhFile the Redlock part's JMH result; may be null or missing
     * @param redlockHarnessFile the Redlock part's harness result; may be null or missing
     * @param pageFile the Markdown page to write
     * @param command the command that produced the results, as shown on the page
     * @return the problems that must fail the build: violations, lost leases, broken
     * adapters
     */
    public static List<String> write(Path jmhFile, Path harnessFile, Path redlockJmhFile, Path redlockHarnessFile,
            Path pageFile, String command) {
        JmhResults jmh = Files.exists(jmhFile) ? JmhResults.read(jmhFile) : null;
        HarnessResults harness = readHarness(harnessFile);
        RedlockSection redlock = redlockSection(redlockJmhFile, redlockHarnessFile);
        ReportMain report = new ReportMain(jmh, harness, redlock, command);
        report.render(pageFile);
        writePage(pageFile, report.page.toString());
        List<String> problems = new ArrayList<>();
        if (harness != null) {
            problems.addAll(harness.problems());
        }
        if (redlock != null) {
            problems.addAll(redlock.problems());
        }
        return problems;
    }

    /**
     * Replaces only the Redlock part of an existing page (its section, its chart and its
     * rows of the targets table) with the given results, keeping every other line, and so
     * every other figure, as the last full run wrote it. The section names its own
     * command and settings, and says so when they are shorter than the full suite's.
     * @param redlockJmhFile the Redlock part's JMH result; may be missing
     * @param redlockHarnessFile the Redlock part's harness result; may be missing
     * @param pageFile an existing page written by the full suite
     * @param command the command of this Redlock-only run, as shown in the section
     * @return the Redlock part's problems, which must fail the build
     * @throws IllegalStateException if the page does not exist, or neither result does
     */
    public static List<String> writeRedlockOnly(Path redlockJmhFile, Path redlockHarnessFile, Path pageFile,
            String command) {
        if (!Files.exists(pageFile)) {
            throw new IllegalStateException(pageFile.toAbsolutePath() + " does not exist: a Redlock-only run "
                    + "replaces a section of a page the full suite wrote. Run the full suite first, or point "
                    + "-Dbench.page at an existing page.");
        }
        RedlockSection redlock = redlockSection(redlockJmhFile, redlockHarnessFile);
        if (redlock == null) {
            throw new IllegalStateException("neither " + redlockJmhFile + " nor " + redlockHarnessFile + " exists: "
                    + "the Redlock part did not run, and the page was left as it was");
        }
        String generatedAt = OffsetDateTime.now(ZoneOffset.UTC)
            .format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));
        String page;
        try {
            page = Files.readString(pageFile, StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot read " + pageFile, ex);
        }
        writePage(pageFile, RedlockSection.splice(page, redlock.section(redlockChart(pageFile), generatedAt, command),
                redlock.targetRows()));
        return redlock.problems();
    }

    /**
     * Replaces only the Micrometer part of an existing page (its rows of the targets
     * table and its paragraph in section 1, see {@link MicrometerSection}) with a run of
     * ours with and without Micrometer, keeping every other line as the last full run
     * wrote it.
     * @param micrometerJmhFile the JMH result of both implementations, at 1 and 8 threads
     * @param pageFile an existing page written by the full suite
     * @param command the command of this Micrometer-only run, as shown in the paragraph
     * @return the problems that must fail the build: none, as a missed target is shown on
     * the page, not failed
     * @throws IllegalStateException if the page or the result does not exist, or the
     * result lacks either implementation
     */
    public static List<String> writeMicrometerOnly(Path micrometerJmhFile, Path pageFile, String command) {
        if (!Files.exists(pageFile)) {
            throw new IllegalStateException(pageFile.toAbsolutePath() + " does not exist: a Micrometer-only run "
                    + "replaces a part of a page the full suite wrote. Run the full suite first, or point "
                    + "-Dbench.page at an existing page.");
        }
        if (!Files.exists(micrometerJmhFile)) {
            throw new IllegalStateException(micrometerJmhFile + " does not exist: the Micrometer run did not run, "
                    + "and the page was left as it was");
        }
        JmhResults jmh = JmhResults.read(micrometerJmhFile);
        for (Implementation implementation : List.of(Implementation.OURS_SERVICE,
                Implementation.OURS_SERVICE_MICROMETER)) {
            if (!jmh.cells.containsKey(implementation.name())) {
                throw new IllegalStateException(micrometerJmhFile + " has no " + implementation.name() + ": the "
                        + "overhead needs both in one run, and the page was left as it was");
            }
        }
        MicrometerSection micrometer = new MicrometerSection(jmh);
        String generatedAt = OffsetDateTime.now(ZoneOffset.UTC)
            .format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));
        String page;
        try {
            page = Files.readString(pageFile, StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot read " + pageFile, ex);
        }
        writePage(pageFile,
                MicrometerSection.splice(page, micrometer.section(generatedAt, command), micrometer.targetRows()));
        return List.of();
    }

    /**
     * Replaces only the consensus part of an existing page (its section and its rows of
     * the targets table, see {@link ConsensusSection}), or adds it before
     * {@code ## Problems}, keeping every other line.
     * @param consensusJmhFile the uncontended runs; may be missing
     * @param consensusHarnessFile the contended runs; may be missing
     * @param pageFile an existing page written by the full suite
     * @param command the command of this consensus-only run, as shown in the section;
     * null when the section belongs to a full run, whose command is at the top of the
     * page
     * @return the part's problems (violations, adapter errors), which must fail the build
     * @throws IllegalStateException if the page does not exist, or neither result does
     */
    public static List<String> writeConsensusOnly(Path consensusJmhFile, Path consensusHarnessFile, Path pageFile,
            String command) {
        if (!Files.exists(pageFile)) {
            throw new IllegalStateException(pageFile.toAbsolutePath() + " does not exist: a consensus-only run "
                    + "replaces a section of a page the full suite wrote. Run the full suite first, or point "
                    + "-Dbench.page at an existing page.");
        }
        if (!Files.exists(consensusJmhFile) && !Files.exists(consensusHarnessFile)) {
            throw new IllegalStateException("neither " + consensusJmhFile + " nor " + consensusHarnessFile
                    + " exists: the consensus part did not run, and the page was left as it was");
        }
        JmhResults jmh = Files.exists(consensusJmhFile) ? JmhResults.read(consensusJmhFile) : null;
        ConsensusResults harness;
        try {
            harness = Files.exists(consensusHarnessFile)
                    ? Json.MAPPER.readValue(Files.readString(consensusHarnessFile), ConsensusResults.class) : null;
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot read " + consensusHarnessFile, ex);
        }
        ConsensusSection consensus = new ConsensusSection(jmh, harness);
        String generatedAt = OffsetDateTime.now(ZoneOffset.UTC)
            .format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));
        String page;
        try {
            page = Files.readString(pageFile, StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot read " + pageFile, ex);
        }
        writePage(pageFile,
                ConsensusSection.splice(page, consensus.section(generatedAt, command), consensus.targetRows()));
        return consensus.problems();
    }

    private static HarnessResults readHarness(Path file) {
        if (file == null || !Files.exists(file)) {
            return null;
        }
        try {
            return Json.read(Files.readString(file), HarnessResults.class);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The Redlock part, or null if neither of its results exists. */
    private static RedlockSection redlockSection(Path jmhFile, Path harnessFile) {
        JmhResults jmh = jmhFile != null && Files.exists(jmhFile) ? JmhResults.read(jmhFile) : null;
        HarnessResults harness = readHarness(harnessFile);
        return jmh == null && harness == null ? null : new RedlockSection(jmh, harness);
    }

    private static Path redlockChart(Path pageFile) {
        return pageFile.resolveSibling(pageFile.getFileName().toString().replaceFirst("\\.md$", "") + "-redlock.png");
    }

    private static void writePage(Path pageFile, String text) {
        try {
            Files.createDirectories(pageFile.toAbsolutePath().getParent());
            Files.writeString(pageFile, text, StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot write " + pageFile, ex);
        }
        System.out.println("report: wrote " + pageFile.toAbsolutePath());
    }

    // ------------------------------------------------------------------------------------------
    // page

    private void render(Path pageFile) {
        String base = pageFile.getFileName().toString().replaceFirst("\\.md$", "");
        Path throughputChart = pageFile.resolveSibling(base + "-throughput.png");
        Path latencyChart = pageFile.resolveSibling(base + "-latency.png");

        line("# Benchmarks");
        line();
        line("<!-- Generated by lock-benchmarks (io.github.distlock.benchmarks.report.ReportMain). Do not edit: "
                + "re-run the command below. -->");
        line();
        if (harness != null && !harness.settings().profile().equals("full")) {
            line("> **This page comes from a `" + harness.settings().profile() + "` run: the numbers only prove that "
                    + "every scenario runs. Publish only a `full` run.**");
            line();
        }
        line("Our lock (on Lettuce, Boot's default, and on Jedis) next to Redisson, Spring Integration's "
                + "`RedisLockRegistry` and the cheapest safe lock "
                + "(the *floor*), each against its own local `redis-server` with persistence off"
                + (redlock != null ? ", and, in section 6, ours and Redisson's RedLock over "
                        + Implementation.REDLOCK_NODES + " such servers" : "")
                + ". Generated "
                + OffsetDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"))
                + " by:");
        line();
        line("```");
        line(command);
        line("```");
        line();
        targets();
        line("Why the figures look the way they do, with the profiles behind the design choices (the "
                + "wait queue and hand-over, the dedicated connection): "
                + "[benchmarks-analysis.md](benchmarks-analysis.md).");
        line();
        environment();
        method();
        uncontended(throughputChart, latencyChart);
        contended();
        roundTrips();
        watchdog();
        processes();
        if (redlock != null) {
            redlock.section(redlockChart(pageFile), null, null).forEach(this::line);
            line();
        }
        problems();
    }

    private void targets() {
        line("## Targets");
        line();
        line("What ours must reach, measured rather than asserted. *Best peer* is the best of Redisson RLock, "
                + "Redisson RFencedLock and both Spring Integration modes; the floor is not a peer.");
        line();
        line("| target | measured | result |");
        line("|---|---|---|");
        if (jmh != null) {
            for (int threads : new int[] { 1, 8 }) {
                double ratio = throughput(OURS, threads) / throughput(FLOOR, threads);
                target("uncontended ≥ 0.9× floor, " + threads + " thread" + (threads > 1 ? "s" : ""), ratio,
                        format(ratio, 2) + "× (" + format(throughput(OURS, threads), 0) + " vs "
                                + format(throughput(FLOOR, threads), 0) + " cycles/s)",
                        ratio >= 0.9);
            }
            for (int threads : new int[] { 1, 8 }) {
                String peer = fastestUncontendedPeer(threads);
                double lead = peer == null ? Double.NaN : throughput(OURS, threads) / throughput(peer, threads);
                // No peer in the run (bench.implementations): the row says "not
                // measured".
                String measured = peer == null ? "" : format(lead, 2) + "× the fastest peer, " + label(peer) + " ("
                        + format(throughput(peer, threads), 0) + " cycles/s)";
                target("uncontended ahead of every peer, " + threads + " thread" + (threads > 1 ? "s" : ""), lead,
                        measured, lead > 1);
            }
            for (int threads : new int[] { 1, 8 }) {
                double overhead = throughput(OURS, threads) / throughput(ANNOTATION, threads) - 1;
                target("`@DistributedLock` overhead ≤ 5 % over `LockService`, " + threads + " thread"
                        + (threads > 1 ? "s" : ""), overhead, percent(overhead), overhead <= 0.05);
            }
            if (MicrometerSection.measured(jmh)) {
                new MicrometerSection(jmh).targetRows().forEach(this::line);
            }
        }
        if (harness != null) {
            harness.roundTrips()
                .stream()
                .filter(r -> r.implementation().equals(OURS))
                .findFirst()
                .ifPresent(r -> target("exactly 2 client round trips per uncontended cycle", r.clientCommandsPerCycle(),
                        format(r.clientCommandsPerCycle(), 2), Math.abs(r.clientCommandsPerCycle() - 2) < 0.005));
            Map<String, List<ContendedResult>> isolated = byImplementation(harness.contended(), "isolated");
            if (isolated.containsKey(OURS)) {
                List<ContendedResult> ours = isolated.get(OURS);
                String bestSwitchPeer = bestPeer(isolated, ContendedResult::switchesPerSecond, true);
                if (bestSwitchPeer != null) {
                    double ratio = Stats.median(ours, ContendedResult::switchesPerSecond)
                            / Stats.median(isolated.get(bestSwitchPeer), ContendedResult::switchesPerSecond);
                    target("contended (isolated) owner switches/s ≥ 1.5× best peer", ratio,
                            format(ratio, 2) + "× " + label(bestSwitchPeer), ratio >= 1.5);
                }
                // Wait percentiles only compare locks that hand over. A lock that
                // re-grants itself to
                // the thread that just released it records near-zero waits for that
                // thread, nearly
                // every acquisition, while the others wait up to seconds: its p99
                // measures barging.
                Map<String, List<ContendedResult>> handingOver = new LinkedHashMap<>();
                List<String> barging = new ArrayList<>();
                isolated.forEach((implementation, results) -> {
                    if (Stats.median(results, ReportMain::handoffShare) >= MIN_HANDOFF_SHARE) {
                        handingOver.put(implementation, results);
                    }
                    else if (Implementation.valueOf(implementation).role() == Role.PEER) {
                        barging.add(label(implementation) + " ("
                                + format(100 * Stats.median(results, ReportMain::handoffShare), 1)
                                + " % of acquisitions changed owner, p99 "
                                + millis(Stats.median(results, r -> (double) r.waitP99Nanos())) + " ms, max wait "
                                + millis(Stats.median(results, r -> (double) r.waitMaxNanos())) + " ms)");
                    }
                });
                String bestWaitPeer = bestPeer(handingOver, r -> r.waitP99Nanos(), false);
                if (bestWaitPeer != null) {
                    double oursP99 = Stats.median(ours, r -> (double) r.waitP99Nanos());
                    double peerP99 = Stats.median(isolated.get(bestWaitPeer), r -> (double) r.waitP99Nanos());
                    target("contended (isolated) wait p99 ≤ ½ best peer's", oursP99 / peerP99,
                            millis(oursP99) + " ms vs " + millis(peerP99) + " ms (" + label(bestWaitPeer) + ")"
                                    + (barging.isEmpty() ? "" : "; not compared, as most of their acquisitions "
                                            + "were re-grants to the same thread: " + String.join(", ", barging)),
                            oursP99 <= peerP99 / 2);
                }
                double fairness = ours.stream().mapToDouble(ContendedResult::minFairShare).min().orElse(0);
                target("no starved thread (each ≥ ¼ of the fair share), contended isolated", fairness,
                        "least-served thread got " + format(fairness, 2) + "× its fair share", fairness >= 0.25);
            }
            long violations = totalViolations();
            target("0 violations, every implementation, every contended run", violations, Long.toString(violations),
                    violations == 0);
            Map<String, List<WatchdogResult>> watchdog = harness.watchdog()
                .stream()
                .collect(
                        Collectors.groupingBy(WatchdogResult::implementation, LinkedHashMap::new, Collectors.toList()));
            if (watchdog.containsKey(OURS)) {
                double perTick = Stats.median(watchdog.get(OURS), WatchdogResult::roundTripsPer100LocksPerTick);
                target("watchdog ≤ 1 round trip per 100 held locks per renewal tick", perTick, format(perTick, 3),
                        perTick <= 1);
            }
        }
        if (redlock != null) {
            redlock.targetRows().forEach(this::line);
        }
        line();
    }

    private void environment() {
        line("## Machine and versions");
        line();
        line("| | |");
        line("|---|---|");
        Environment.machine().forEach((name, value) -> line("| " + name + " | " + value + " |"));
        Environment.versions(jmh != null ? jmh.jmhVersion : "?")
            .forEach((name, value) -> line("| " + name + " | " + value + " |"));
        line();
        line("Client JVMs, redis-server and the harness share these cores, over loopback: absolute numbers are "
                + "this machine's; the ratios between implementations are the point.");
        line();
    }

    private void method() {
        line("## Settings and method");
        line();
        if (jmh != null) {
            line("- **Scenario 1 (JMH):** " + (jmh.forks == 0 ? "no fork (in the calling JVM)" : jmh.forks + " forks")
                    + (jmh.interleaved ? " in rounds (each round runs one fork of every implementation, in a "
                            + "rotated order, so that none has all its forks in one slow stretch of the machine)" : "")
                    + " × (" + jmh.warmupIterations + " × " + jmh.warmupTime + " warm-up + " + jmh.measurementIterations
                    + " × " + jmh.measurementTime + " measurement), fork JVM args `" + jmh.jvmArgs
                    + "`. Throughput is the median over forks of "
                    + "each fork's mean; p50/p99 are the median over forks of each fork's percentile (SampleTime).");
        }
        if (harness != null) {
            HarnessSettings s = harness.settings();
            line("- **Harness profile `" + s.profile() + "`**, " + Math.max(1, s.forks()) + " fork(s) per measurement"
                    + (s.forks() == 0 ? " (in one JVM)"
                            : " (a fresh JVM each, -Xmx1g), in rounds of one fork per " + "implementation")
                    + "; medians over forks; " + "ran " + Math.round(harness.seconds()) + " s.");
            line("- **Scenario 2:** " + s.contendedThreads() + " threads on one key, " + seconds(s.contendedWarmup())
                    + " warm-up then a " + seconds(s.contendedMeasure()) + " window, wait limit "
                    + seconds(s.waitTime()) + ". The critical section reads a plain `long`, writes it +1 and records "
                    + "the previous owner; wait = from calling the lock to entering the section (HdrHistogram).");
            line("- **Scenario 3:** " + s.roundTripCycles() + " cycles for `INFO commandstats`, another "
                    + s.roundTripCycles() + " under `MONITOR`, one more as transcript; server CPU over a "
                    + seconds(s.roundTripCpuMeasure()) + " window of " + RoundTripScenario.LOADED_THREADS
                    + " threads on their own keys, after " + seconds(s.roundTripCpuWarmup()) + " of warm-up.");
            line("- **Scenario 4:** " + s.watchdogLocks() + " locks, ttl " + seconds(s.watchdogTtl()) + ", held "
                    + seconds(s.watchdogHold()) + " (CPU, commandstats) then " + seconds(s.watchdogMonitor())
                    + " more under `MONITOR`; idle CPU baseline " + seconds(s.watchdogIdle()) + ".");
            line("- **Scenario 5:** " + s.processCount() + " JVMs × " + s.processThreads()
                    + " threads (one client per JVM) on one key; counter in a shared memory-mapped file; "
                    + seconds(s.processWarmup()) + " warm-up, " + seconds(s.processMeasure()) + " window.");
        }
        line("- Ours is configured only through properties, with defaults: ttl 30 s, watchdog on. On Lettuce "
                + "(Boot's default client) the auto-configuration picks our native backend (its own connection, "
                + "shared by all threads); *ours: LockService, Jedis* sets `spring.data.redis.client-type=jedis` "
                + "with `spring.data.redis.jedis.pool.max-active` and `max-idle` = " + OurApplication.JEDIS_POOL_SIZE
                + " (the backend runs up to 8 commands at once, the release subscription holds one connection, "
                + "renewals up to 4 more), which gets our Spring Data backend: a pooled connection per command. "
                + "Ours on Jedis is ours, never a peer, and is not part of scenario 4. Redisson: "
                + "defaults, `lock()`/`tryLock(wait)` without lease time (watchdog on, 30 s). Spring Integration: "
                + "defaults, 30 s expiry; it renews only when given a scheduler, which only scenario 4 does. Floor: "
                + "one Lettuce connection, `SET NX PX` + `EVALSHA`, retries every 1 ms when contended.");
        line();
    }

    private void uncontended(Path throughputChart, Path latencyChart) {
        line("## 1. Uncontended lock + unlock (JMH)");
        line();
        if (jmh == null) {
            line("_Not run._");
            line();
            return;
        }
        line("Each thread on its own key, all threads sharing one client per implementation.");
        line();
        line("| implementation | 1 thread cycles/s | × floor | p50 µs | p99 µs | 8 threads cycles/s | × floor | "
                + "p50 µs | p99 µs |");
        line("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        List<String> labels = new ArrayList<>();
        List<List<Double>> throughputSeries = List.of(new ArrayList<>(), new ArrayList<>());
        List<List<Double>> latencySeries = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(),
                new ArrayList<>());
        for (Implementation implementation : Implementation.values()) {
            if (!jmh.cells.containsKey(implementation.name())) {
                continue;
            }
            StringBuilder row = new StringBuilder("| " + implementation.label());
            int t = 0;
            for (int threads : new int[] { 1, 8 }) {
                JmhResults.Cell cell = jmh.cell(implementation.name(), threads);
                double throughput = cell == null ? Double.NaN : cell.throughput;
                double p50 = cell == null ? Double.NaN : cell.p50Micros;
                double p99 = cell == null ? Double.NaN : cell.p99Micros;
                row.append(" | ")
                    .append(format(throughput, 0))
                    .append(" | ")
                    .append(format(throughput / throughput(FLOOR, threads), 2))
                    .append(" | ")
                    .append(format(p50, 1))
                    .append(" | ")
                    .append(format(p99, 1));
                throughputSeries.get(t).add(throughput);
                latencySeries.get(2 * t).add(p50);
                latencySeries.get(2 * t + 1).add(p99);
                t++;
            }
            line(row.append(" |").toString());
            labels.add(implementation.shortLabel());
        }
        line();
        Charts.bars(throughputChart, "Uncontended lock + unlock cycles per second (higher is better)", "cycles/s",
                labels, List.of("1 thread", "8 threads"), throughputSeries, false);
        Charts.bars(latencyChart, "Uncontended cycle time in microseconds, log scale (lower is better)", "µs", labels,
                List.of("p50, 1 thread", "p99, 1 thread", "p50, 8 threads", "p99, 8 threads"), latencySeries, true);
        line("![Uncontended throughput](" + throughputChart.getFileName() + ")");
        line();
        line("![Uncontended latency](" + latencyChart.getFileName() + ")");
        line();
        if (MicrometerSection.measured(jmh)) {
            new MicrometerSection(jmh).section(null, null).forEach(this::line);
            line();
        }
    }

    private void contended() {
        line("## 2. Contended: 8 threads, one key, one JVM");
        line();
        if (harness == null || harness.contended().isEmpty()) {
            line("_Not run._");
            line();
            return;
        }
        line("**Isolated** (the headline): every thread has its own client, connections and lock service, as "
                + "separate application instances do. **Shared**: one client per implementation for all threads, "
                + "where in-JVM shortcuts show. An *owner switch* is an acquisition by a different thread than the "
                + "previous one; a local lock re-granted to the same thread is not a handoff. *Fairness* is the "
                + "least-served thread's acquisitions over the fair share, worst fork (below 0.25: starved). "
                + "*Violations* = acquisitions − counter growth; anything but 0 means two owners at once.");
        line();
        for (String mode : List.of("isolated", "shared")) {
            line("### " + mode);
            line();
            contendedTable(byImplementation(harness.contended(), mode));
        }
    }

    private void contendedTable(Map<String, List<ContendedResult>> results) {
        contendedTableLines(results).forEach(this::line);
    }

    /**
     * The table of a contended scenario, one row per implementation, then a blank line.
     */
    static List<String> contendedTableLines(Map<String, List<ContendedResult>> results) {
        List<String> lines = new ArrayList<>();
        lines.add("| implementation | acquisitions/s | owner switches/s | wait p50 ms | wait p99 ms | wait max ms | "
                + "fairness | per-thread acquisitions (median fork) | timeouts | violations |");
        lines.add("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|");
        for (Implementation implementation : Implementation.values()) {
            List<ContendedResult> forks = results.get(implementation.name());
            if (forks == null) {
                continue;
            }
            double throughput = Stats.median(forks, ContendedResult::acquisitionsPerSecond);
            ContendedResult typical = forks.stream()
                .min(Comparator.comparingDouble(r -> Math.abs(r.acquisitionsPerSecond() - throughput)))
                .orElseThrow();
            lines.add("| " + implementation.label() + " | " + format(throughput, 0) + " | "
                    + format(Stats.median(forks, ContendedResult::switchesPerSecond), 0) + " | "
                    + millis(Stats.median(forks, r -> (double) r.waitP50Nanos())) + " | "
                    + millis(Stats.median(forks, r -> (double) r.waitP99Nanos())) + " | "
                    + millis(Stats.median(forks, r -> (double) r.waitMaxNanos())) + " | "
                    + format(forks.stream().mapToDouble(ContendedResult::minFairShare).min().orElse(0), 2) + " | "
                    + Arrays.stream(typical.perThread()).mapToObj(Long::toString).collect(Collectors.joining(" "))
                    + " | " + forks.stream().mapToLong(ContendedResult::timeouts).sum() + " | "
                    + forks.stream().mapToLong(ContendedResult::violations).sum() + " |");
        }
        lines.add("");
        return lines;
    }

    private void roundTrips() {
        line("## 3. Server cost of one uncontended cycle");
        line();
        if (harness == null || harness.roundTrips().isEmpty()) {
            line("_Not run._");
            line();
            return;
        }
        line("*Client round trips* are the commands clients sent, counted with `MONITOR` (commands a Lua script "
                + "runs appear there as `[lua]` and are not round trips). *Server commands* are `INFO commandstats` "
                + "deltas, which in Redis 7 include the commands scripts run. *Server CPU* is redis-server's user + "
                + "system time (`INFO cpu`, socket I/O included) per cycle while " + RoundTripScenario.LOADED_THREADS
                + " threads, each on its own key, run cycles through one client: a busy server, as in scenario 1's "
                + "8-thread run. Timed over one thread's cycles instead, the server sleeps between commands and "
                + "wakes to cold caches, and the figure moved by 2× between runs.");
        line();
        line("*Server reads* are the socket reads redis-server processed (`INFO stats total_reads_processed`) per "
                + "cycle in the same window: fewer than the round trips when the client writes several threads' "
                + "commands on one connection before the server reads (pipelining), as many when each command "
                + "travels alone on a connection of its own. *Connections* are the client's open connections "
                + "at the end of that window (`INFO clients`).");
        line();
        int loaded = RoundTripScenario.LOADED_THREADS;
        line("| implementation | client round trips / cycle | server commands / cycle | server CPU µs / cycle, "
                + loaded + " threads | server reads / cycle, " + loaded + " threads | connections, " + loaded
                + " threads | server commands per cycle, by command |");
        line("|---|---:|---:|---:|---:|---:|---|");
        for (RoundTripResult result : ordered(harness.roundTrips(), RoundTripResult::implementation)) {
            line("| " + label(result.implementation()) + " | " + format(result.clientCommandsPerCycle(), 2) + " | "
                    + format(result.serverCommandsPerCycle(), 2) + " | " + format(result.serverCpuMicrosPerCycle(), 1)
                    + " | " + format(result.serverReadsPerCycle(), 2) + " | " + result.clientConnections() + " | "
                    + breakdown(result.serverCommandsBreakdown()) + " |");
        }
        line();
        line("<details><summary>MONITOR transcript of one cycle per implementation</summary>");
        line();
        for (RoundTripResult result : ordered(harness.roundTrips(), RoundTripResult::implementation)) {
            line("**" + label(result.implementation()) + "**");
            line();
            line("```");
            result.oneCycle().forEach(this::line);
            line("```");
            line();
        }
        line("</details>");
        line();
    }

    private void watchdog() {
        line("## 4. Watchdog: many locks held at once");
        line();
        if (harness == null || harness.watchdog().isEmpty()) {
            line("_Not run._");
            line();
            return;
        }
        HarnessSettings s = harness.settings();
        line(s.watchdogLocks() + " locks held by one client with a " + seconds(s.watchdogTtl())
                + " lease, renewed every third of it (a *tick*). Client CPU is the process's CPU time while "
                + "holding; idle is the same client after releasing them all; net is the difference. Heap is "
                + "used heap after full GCs, while holding minus before, "
                + "per lock. *Lost* leases expired while held (renewal failed).");
        line();
        line("| implementation | round trips/s | round trips per 100 locks per tick | server commands/s | "
                + "client CPU ms/s holding | idle ms/s | net | heap bytes per lock | time to acquire all s | lost |");
        line("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        Map<String, List<WatchdogResult>> grouped = harness.watchdog()
            .stream()
            .collect(Collectors.groupingBy(WatchdogResult::implementation, LinkedHashMap::new, Collectors.toList()));
        for (Implementation implementation : Implementation.values()) {
            List<WatchdogResult> forks = grouped.get(implementation.name());
            if (forks == null) {
                continue;
            }
            line("| " + implementation.label() + " | "
                    + format(Stats.median(forks, WatchdogResult::roundTripsPerSecond), 1) + " | "
                    + format(Stats.median(forks, WatchdogResult::roundTripsPer100LocksPerTick), 3) + " | "
                    + format(Stats.median(forks, WatchdogResult::serverCommandsPerSecond), 0) + " | "
                    + format(Stats.median(forks, WatchdogResult::cpuMillisPerSecond), 1) + " | "
                    + format(Stats.median(forks, WatchdogResult::idleCpuMillisPerSecond), 1) + " | "
                    + format(Stats.median(forks, r -> r.cpuMillisPerSecond() - r.idleCpuMillisPerSecond()), 1) + " | "
                    + format(Stats.median(forks, WatchdogResult::heapBytesPerLock), 0) + " | "
                    + format(Stats.median(forks, WatchdogResult::acquireSeconds), 2) + " | "
                    + forks.stream().mapToLong(WatchdogResult::lost).sum() + " |");
        }
        line();
        line("Not measured: `@DistributedLock` (same watchdog as `LockService`), ours on Jedis (left out to keep "
                + "the run short), Spring Integration `SPIN_LOCK` (same renewal as `PUB_SUB_LOCK`), the floor "
                + "(no renewal).");
        line();
    }

    private void processes() {
        HarnessSettings s = harness == null ? null : harness.settings();
        line("## 5. Contended across JVMs" + (s == null ? ""
                : ": " + s.processCount() + " processes × " + s.processThreads() + " threads, one key"));
        line();
        if (harness == null || harness.processes().isEmpty()) {
            line("_Not run._");
            line();
            return;
        }
        line("Each JVM has one client shared by its threads, like one application instance; the counter lives in "
                + "a memory-mapped file all JVMs read and write without atomics. Owner ids are unique across JVMs.");
        line();
        contendedTable(harness.processes()
            .stream()
            .collect(Collectors.groupingBy(ContendedResult::implementation, LinkedHashMap::new, Collectors.toList())));
    }

    private void problems() {
        line("## Problems");
        line();
        List<String> problems = new ArrayList<>(harness == null ? List.of() : harness.problems());
        if (redlock != null) {
            problems.addAll(redlock.problems());
        }
        if (problems.isEmpty()) {
            line("None: no violation, no adapter error, no lease of ours lost"
                    + (harness == null ? " (harness not run)" : "") + ".");
        }
        else {
            problems.forEach(problem -> line("- " + problem));
        }
        line();
    }

    // ------------------------------------------------------------------------------------------
    // helpers

    private long totalViolations() {
        return harness.contended().stream().mapToLong(ContendedResult::violations).sum()
                + harness.processes().stream().mapToLong(ContendedResult::violations).sum();
    }

    private double throughput(String implementation, int threads) {
        JmhResults.Cell cell = jmh == null ? null : jmh.cell(implementation, threads);
        return cell == null ? Double.NaN : cell.throughput;
    }

    /**
     * The peer with the most uncontended cycles/s at {@code threads}, or null if no peer
     * ran.
     */
    private String fastestUncontendedPeer(int threads) {
        String fastest = null;
        for (Implementation implementation : Implementation.values()) {
            double value = throughput(implementation.name(), threads);
            if (implementation.role() == Role.PEER && !Double.isNaN(value)
                    && (fastest == null || value > throughput(fastest, threads))) {
                fastest = implementation.name();
            }
        }
        return fastest;
    }

    static Map<String, List<ContendedResult>> byImplementation(List<ContendedResult> results, String mode) {
        return results.stream()
            .filter(result -> result.mode().equals(mode))
            .collect(Collectors.groupingBy(ContendedResult::implementation, LinkedHashMap::new, Collectors.toList()));
    }

    /** Owner switches per acquisition: 1 when every acquisition is a handoff. */
    private static double handoffShare(ContendedResult result) {
        return result.acquisitions() == 0 ? 0 : (double) result.ownerSwitches() / result.acquisitions();
    }

    /**
     * The peer with the highest (or lowest) median of {@code metric}, or null if no peer
     * ran.
     */
    private static String bestPeer(Map<String, List<ContendedResult>> results, ToDoubleFunction<ContendedResult> metric,
            boolean highest) {
        String best = null;
        double bestValue = Double.NaN;
        for (Map.Entry<String, List<ContendedResult>> entry : results.entrySet()) {
            if (Implementation.valueOf(entry.getKey()).role() != Role.PEER) {
                continue;
            }
            double value = Stats.median(entry.getValue(), metric::applyAsDouble);
            if (best == null || (highest ? value > bestValue : value < bestValue)) {
                best = entry.getKey();
                bestValue = value;
            }
        }
        return best;
    }

    private static <T> List<T> ordered(List<T> items, java.util.function.Function<T, String> implementation) {
        return items.stream()
            .sorted(Comparator.comparingInt(item -> Implementation.valueOf(implementation.apply(item)).ordinal()))
            .toList();
    }

    private static String label(String implementation) {
        return Implementation.valueOf(implementation).label();
    }

    /**
     * One row of the targets table.
     * @param value the number the target is about; NaN when a side of the comparison did
     * not run
     */
    private void target(String name, double value, String measured, boolean met) {
        line(targetRow(name, value, measured, met));
    }

    /** One row of the targets table; "not measured" when {@code value} is NaN. */
    static String targetRow(String name, double value, String measured, boolean met) {
        if (Double.isNaN(value)) {
            return "| " + name + " | not measured | – |";
        }
        return "| " + name + " | " + measured + " | " + (met ? "met" : "**missed**") + " |";
    }

    private static String breakdown(Map<String, Double> perCommand) {
        return perCommand.entrySet()
            .stream()
            .map(entry -> entry.getKey() + " " + format(entry.getValue(), 2))
            .collect(Collectors.joining(", "));
    }

    static String format(double value, int decimals) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return "–";
        }
        return String.format(Locale.ROOT, "%,." + decimals + "f", value);
    }

    static String percent(double fraction) {
        return Double.isNaN(fraction) ? "–" : String.format(Locale.ROOT, "%+.1f %%", fraction * 100);
    }

    static String millis(double nanos) {
        return format(nanos / 1e6, nanos < 1e7 ? 2 : 1);
    }

    static String seconds(java.time.Duration duration) {
        double seconds = duration.toMillis() / 1000.0;
        return (seconds == Math.rint(seconds) ? Long.toString((long) seconds) : Double.toString(seconds)) + " s";
    }

    private void line(String text) {
        page.append(text).append('\n');
    }

    private void line() {
        page.append('\n');
    }

}
