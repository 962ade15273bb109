package io.github.distlock.benchmarks.jmh;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.harness.Arguments;

/**
 * Runs scenario 1 ({@link UncontendedBenchmark}) and writes JMH's JSON result.
 *
 * <p>Options ({@code --name=value}): {@code forks}, {@code warmup-iterations}, {@code warmup-time},
 * {@code iterations}, {@code iteration-time}, {@code implementations} (comma-separated
 * {@link Implementation} names, default all), {@code methods} (a regex over the benchmark method
 * names, default all four), {@code output} (the JSON file), {@code profiler} (a JMH profiler with its
 * options, for example {@code jfr:dir=target/jfr} to record every fork with Java Flight Recorder).
 */
public final class JmhMain {

    /** Heap of every JMH fork: fixed, so that no implementation is measured with a different one. */
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
     *
     * @param arguments see the class comment; {@code forks=0} runs in this JVM (only for the smoke)
     * @return JMH's results
     * @throws RunnerException if a benchmark fails: every error fails the run, so a broken adapter
     *         cannot go unnoticed
     */
    public static Collection<RunResult> run(Arguments arguments) throws RunnerException {
        Path output = Path.of(arguments.string("output", "target/bench/jmh.json")).toAbsolutePath();
        try {
            Files.createDirectories(output.getParent());
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        String methods = arguments.string("methods", "throughput1|throughput8|latency1|latency8");
        String[] implementations = Implementation.parseList(arguments.string("implementations", "all")).stream()
                .map(Enum::name)
                .toArray(String[]::new);
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(UncontendedBenchmark.class.getName() + "\\.(" + methods + ")$")
                .param("implementation", implementations)
                .forks(arguments.integer("forks", 3))
                .warmupIterations(arguments.integer("warmup-iterations", 5))
                .warmupTime(TimeValue.fromString(arguments.string("warmup-time", "2s")))
                .measurementIterations(arguments.integer("iterations", 5))
                .measurementTime(TimeValue.fromString(arguments.string("iteration-time", "2s")))
                .jvmArgsAppend(FORK_JVM_ARGS.toArray(String[]::new))
                .shouldFailOnError(true)
                .resultFormat(ResultFormatType.JSON)
                .result(output.toString());
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
        return new Runner(options.build()).run();
    }
}
