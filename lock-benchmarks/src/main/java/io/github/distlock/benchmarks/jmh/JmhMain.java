package io.github.distlock.benchmarks.jmh;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import io.github.distlock.benchmarks.adapter.ConsensusImplementation;
import io.github.distlock.benchmarks.adapter.ConsensusTarget;
import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.adapter.OurApplication;
import io.github.distlock.benchmarks.harness.Arguments;

/**
 * Runs scenario 1 ({@link UncontendedBenchmark}) and writes JMH's JSON result.
 *
 * <p>
 * Options ({@code --name=value}): {@code forks}, {@code warmup-iterations},
 * {@code warmup-time}, {@code iterations}, {@code iteration-time}, {@code benchmark}
 * ({@code uncontended}, the default: {@link UncontendedBenchmark}; {@code consensus}:
 * {@link ConsensusBenchmark}, against the servers named in this JVM's system properties,
 * which the forks get too), {@code implementations} (comma-separated
 * {@link Implementation} names, or {@link ConsensusImplementation} names for
 * {@code consensus}, default all), {@code methods} (&#124;-separated regexes over the
 * benchmark method names, default all four), {@code output} (the JSON file),
 * {@code profiler} (a JMH profiler with its options, for example
 * {@code jfr:dir=target/jfr} to record every fork with Java Flight Recorder),
 * {@code only} ({@code all}, {@code redlock}, {@code micrometer} or {@code consensus}:
 * the suite's {@code bench.only}, checked here so that a mistyped value fails before
 * anything runs), {@code redlock-node-timeout} (see
 * {@link OurApplication#REDLOCK_NODE_TIMEOUT_PROPERTY}).
 *
 * <p>
 * With more than one fork the forks run in rounds: one fork of every method and
 * implementation per round, so that each implementation is measured at every stretch of
 * the run. The JSON then holds one entry per benchmark whose {@code rawData} has a row
 * per round (its {@code forks} field says 1, as each round ran one); {@code JmhResults}
 * counts the rows.
 */
public final class JmhMain {

    /**
     * Heap of every JMH fork: fixed, so that no implementation is measured with a
     * different one.
     */
    static final List<String> FORK_JVM_ARGS = List.of("-Xms1g", "-Xmx1g");

    private JmhMain() {
    }

    /**
     * @param args see the class comment
     * @throws RunnerException if a benchmark fails
     */
    public static void main(String[] args) throws RunnerException {
        run(Arguments.parse(args));
    }

    /**
     * Runs the benchmarks.
     * @param arguments see the class comment; {@code forks=0} runs in this JVM (only for
     * the smoke)
     * @return JMH's results
     * @throws RunnerException if a benchmark fails: every error fails the run, so a
     * broken adapter cannot go unnoticed
     */
    public static Collection<RunResult> run(Arguments arguments) throws RunnerException {
        // The suite's first step: a mistyped -Dbench.only fails here, not in the report
        // an hour later.
        String only = arguments.string("only", "all");
        if (!List.of("all", "redlock", "micrometer", "consensus").contains(only)) {
            throw new IllegalArgumentException(
                    "bench.only (--only) must be all, redlock, micrometer or consensus, was '" + only + "'");
        }
        boolean consensus = arguments.string("benchmark", "uncontended").equals("consensus");
        Path output = Path.of(arguments.string("output", "target/bench/jmh.json")).toAbsolutePath();
        try {
            Files.createDirectories(output.getParent());
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        List<String> methods = List
            .of(arguments.string("methods", "throughput1|throughput8|latency1|latency8").split("\\|"));
        String implementationList = arguments.string("implementations", "all");
        List<String> implementations = (consensus ? ConsensusImplementation.parseList(implementationList)
                : Implementation.parseList(implementationList))
            .stream()
            .map(Enum::name)
            .toList();
        int forks = arguments.integer("forks", 3);
        if (forks <= 1) {
            Collection<RunResult> results = new Runner(options(arguments, methods, implementations, forks).build())
                .run();
            write(output, results);
            return results;
        }
        return writeMerged(output, runInterleaved(arguments, methods, implementations, forks));
    }

    /**
     * Runs {@code forks} rounds, each with one fork of every method and implementation,
     * the implementations in a rotated order per round; JMH on its own would run all
     * forks of one benchmark back to back. The machine drifts over minutes (other VMs
     * share the host): back to back, one implementation's forks can all fall into a slow
     * stretch, and the ratios carry it.
     */
    private static List<RunResult> runInterleaved(Arguments arguments, List<String> methods,
            List<String> implementations, int forks) throws RunnerException {
        List<RunResult> forkResults = new ArrayList<>();
        for (int round = 0; round < forks; round++) {
            List<String> order = new ArrayList<>(implementations);
            Collections.rotate(order, -round);
            for (String method : methods) {
                for (String implementation : order) {
                    System.out
                        .println("jmh: round " + (round + 1) + "/" + forks + ", " + method + ", " + implementation);
                    forkResults.addAll(
                            new Runner(options(arguments, List.of(method), List.of(implementation), 1).build()).run());
                }
            }
        }
        return forkResults;
    }

    /** One result per benchmark and implementation, holding the forks of every round. */
    private static Collection<RunResult> writeMerged(Path output, List<RunResult> forkResults) {
        Map<String, List<RunResult>> byBenchmark = new LinkedHashMap<>();
        for (RunResult result : forkResults) {
            BenchmarkParams params = result.getParams();
            String key = params.getBenchmark() + " " + params.getMode() + " " + params.getParam("implementation");
            byBenchmark.computeIfAbsent(key, ignored -> new ArrayList<>()).add(result);
        }
        List<RunResult> merged = new ArrayList<>();
        for (List<RunResult> rounds : byBenchmark.values()) {
            List<BenchmarkResult> allForks = new ArrayList<>();
            rounds.forEach(round -> allForks.addAll(round.getBenchmarkResults()));
            // Each round's parameters say forks = 1; the JSON keeps that, and one rawData
            // row per round.
            merged.add(new RunResult(rounds.get(0).getParams(), allForks));
        }
        merged.sort(RunResult.DEFAULT_SORT_COMPARATOR);
        write(output, merged);
        return merged;
    }

    private static ChainedOptionsBuilder options(Arguments arguments, List<String> methods,
            List<String> implementations, int forks) {
        Class<?> benchmark = arguments.string("benchmark", "uncontended").equals("consensus") ? ConsensusBenchmark.class
                : UncontendedBenchmark.class;
        ChainedOptionsBuilder options = new OptionsBuilder()
            .include(benchmark.getName() + "\\.(" + String.join("|", methods) + ")$")
            .param("implementation", implementations.toArray(String[]::new))
            .forks(forks)
            .warmupIterations(arguments.integer("warmup-iterations", 5))
            .warmupTime(TimeValue.fromString(arguments.string("warmup-time", "2s")))
            .measurementIterations(arguments.integer("iterations", 5))
            .measurementTime(TimeValue.fromString(arguments.string("iteration-time", "2s")))
            .jvmArgsAppend(forkJvmArgs(arguments).toArray(String[]::new))
            .shouldFailOnError(true);
        String profiler = arguments.string("profiler", "");
        if (!profiler.isEmpty()) {
            int colon = profiler.indexOf(':');
            if (colon < 0) {
                options.addProfiler(profiler);
            }
            else {
                options.addProfiler(profiler.substring(0, colon), profiler.substring(colon + 1));
            }
        }
        return options;
    }

    /**
     * {@link #FORK_JVM_ARGS}, plus the Redlock node timeout when
     * {@code --redlock-node-timeout} sets one: as a JVM argument it reaches the forks,
     * and JMH's JSON records it for the report.
     */
    private static List<String> forkJvmArgs(Arguments arguments) {
        List<String> consensusServers = new ArrayList<>();
        for (String property : List.of(ConsensusTarget.ETCD_PROPERTY, ConsensusTarget.ZOOKEEPER_PROPERTY,
                ConsensusTarget.REDIS_PROPERTY)) {
            // The servers the consensus run started in this JVM, which every fork
            // measures
            // against.
            String value = System.getProperty(property);
            if (value != null) {
                consensusServers.add("-D" + property + "=" + value);
            }
        }
        String nodeTimeout = arguments.string("redlock-node-timeout", "").trim();
        if (nodeTimeout.isEmpty()) {
            List<String> args = new ArrayList<>(FORK_JVM_ARGS);
            args.addAll(consensusServers);
            return args;
        }
        // A run without forks (the smoke) reads it from this JVM.
        System.setProperty(OurApplication.REDLOCK_NODE_TIMEOUT_PROPERTY, nodeTimeout);
        List<String> args = new ArrayList<>(FORK_JVM_ARGS);
        args.addAll(consensusServers);
        args.add("-D" + OurApplication.REDLOCK_NODE_TIMEOUT_PROPERTY + "=" + nodeTimeout);
        return args;
    }

    private static void write(Path output, Collection<RunResult> results) {
        ResultFormatFactory.getInstance(ResultFormatType.JSON, output.toString()).writeOut(results);
    }

}
