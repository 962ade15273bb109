package io.github.distlock.benchmarks.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.core.type.TypeReference;
import org.openjdk.jmh.runner.RunnerException;

import io.github.distlock.benchmarks.adapter.ConsensusImplementation;
import io.github.distlock.benchmarks.adapter.ConsensusImplementation.Store;
import io.github.distlock.benchmarks.adapter.ConsensusServers;
import io.github.distlock.benchmarks.adapter.ConsensusTarget;
import io.github.distlock.benchmarks.adapter.LockAdapter;
import io.github.distlock.benchmarks.adapter.RedisTarget;
import io.github.distlock.benchmarks.jmh.JmhMain;

/**
 * The consensus part of the suite ({@code -Pbench -Dbench.only=consensus}): starts one
 * 3-member etcd cluster, one 3-member ZooKeeper ensemble and one redis-server, then
 * measures every {@link ConsensusImplementation} against those same servers: uncontended
 * under JMH ({@code ConsensusBenchmark}, 1 and 8 threads, p50 at 1 thread), then
 * contended, N threads on one key, each thread on a client of its own (separate
 * application instances), through {@link ContendedRun} with its safety check; last, for
 * each etcd and ZooKeeper implementation, the calls the servers counted per cycle.
 *
 * <p>
 * Options ({@code --name=value}): the JMH ones of {@link JmhMain} ({@code forks},
 * {@code warmup-iterations}, {@code warmup-time}, {@code iterations},
 * {@code iteration-time}, {@code implementations}), {@code threads} (8),
 * {@code contended-warmup} (5 s), {@code contended-measure} (15 s), {@code wait-time} (10
 * s), {@code jmh-output}, {@code output}. With {@code forks=0} everything runs in this
 * JVM (the smoke).
 */
public final class ConsensusMain {

    private ConsensusMain() {
    }

    /**
     * @param args see the class comment
     * @throws Exception if a measurement fails
     */
    public static void main(String[] args) throws Exception {
        ConsensusResults results = run(Arguments.parse(args));
        List<String> problems = results.problems();
        if (!problems.isEmpty()) {
            // The report still runs and shows them; the build fails there.
            problems.forEach(problem -> System.err.println("consensus: " + problem));
        }
        // Client libraries leave non-daemon threads behind.
        System.exit(0);
    }

    /**
     * Starts the servers, runs both parts, writes both files and stops the servers.
     * @param arguments see the class comment
     * @return the contended results (the JMH results are in {@code jmh-output})
     * @throws RunnerException if a JMH benchmark fails
     * @throws InterruptedException if interrupted
     */
    public static ConsensusResults run(Arguments arguments) throws RunnerException, InterruptedException {
        Path jmhOutput = Path.of(arguments.string("jmh-output", "target/bench/consensus-jmh.json"));
        Path output = Path.of(arguments.string("output", "target/bench/consensus-harness.json"));
        int forks = arguments.integer("forks", 3);
        int threads = arguments.integer("threads", 8);
        Duration warmup = arguments.duration("contended-warmup", Duration.ofSeconds(5));
        Duration measure = arguments.duration("contended-measure", Duration.ofSeconds(15));
        Duration waitTime = arguments.duration("wait-time", RedisTarget.DEFAULT_WAIT);
        List<ConsensusImplementation> implementations = ConsensusImplementation
            .parseList(arguments.string("implementations", "all"));
        try (ConsensusServers servers = ConsensusServers.start()) {
            ConsensusTarget target = servers.target(waitTime);
            target.systemProperties().forEach(System::setProperty);
            List<String> jmhArgs = new ArrayList<>();
            for (String option : List.of("forks", "warmup-iterations", "warmup-time", "iterations", "iteration-time",
                    "implementations", "methods", "profiler")) {
                String value = arguments.string(option, null);
                if (value != null) {
                    jmhArgs.add("--" + option + "=" + value);
                }
            }
            if (arguments.string("methods", null) == null) {
                jmhArgs.add("--methods=throughput1|throughput8|latency1");
            }
            jmhArgs.add("--benchmark=consensus");
            jmhArgs.add("--only=consensus");
            jmhArgs.add("--output=" + jmhOutput);
            JmhMain.run(Arguments.parse(jmhArgs.toArray(String[]::new)));

            List<ContendedResult> contended = new ArrayList<>();
            for (int round = 0; round < Math.max(1, forks); round++) {
                List<ConsensusImplementation> order = new ArrayList<>(implementations);
                // Each round in another order, so that no implementation always runs on
                // the servers right after the same other one.
                Collections.rotate(order, -round);
                for (ConsensusImplementation implementation : order) {
                    System.out.println("consensus: contended round " + (round + 1) + "/" + Math.max(1, forks) + ", "
                            + implementation);
                    contended.add(forks == 0 ? contended(target, implementation, threads, warmup, measure)
                            : contendedInFork(target, implementation, threads, warmup, measure));
                }
            }
            List<ConsensusResults.CallProfile> calls = new ArrayList<>();
            for (ConsensusImplementation implementation : implementations) {
                if (implementation.store() != Store.REDIS) {
                    System.out.println("consensus: server calls of " + implementation);
                    calls.add(calls(target, implementation, arguments.integer("call-cycles", 200), threads,
                            arguments.duration("call-contended", Duration.ofSeconds(3))));
                }
            }
            ConsensusResults results = new ConsensusResults(Math.max(1, forks), threads, warmup.toMillis() / 1000.0,
                    measure.toMillis() / 1000.0, waitTime.toMillis(), servers.etcdVersion(),
                    org.apache.zookeeper.Version.getFullVersion(), contended, calls);
            Json.write(output, results);
            return results;
        }
    }

    /**
     * {@code threads} threads on one key, each on a client of its own.
     * @param target the servers
     * @param implementation what to measure
     * @param threads contending threads
     * @param warmup warm-up
     * @param measure the window
     * @return the run's result
     * @throws InterruptedException if interrupted
     */
    public static ContendedResult contended(ConsensusTarget target, ConsensusImplementation implementation, int threads,
            Duration warmup, Duration measure) throws InterruptedException {
        List<LockAdapter> opened = new ArrayList<>();
        try {
            for (int i = 0; i < threads; i++) {
                opened.add(implementation.open(target));
            }
            opened.forEach(Adapters::prime);
            SharedResource.InJvm resource = new SharedResource.InJvm();
            // A fresh key per run: nothing left by an earlier run can hold it.
            String key = "bench:contended:" + UUID.randomUUID();
            ContendedRun.Outcome outcome = ContendedRun.run(opened, key, resource, 0, warmup, measure,
                    target.waitTime());
            return ContendedResult.of(implementation.name(), "isolated", outcome, resource.counter());
        }
        finally {
            Adapters.closeAll(opened);
        }
    }

    /**
     * Counts what the servers did for {@code cycles} uncontended cycles on one thread,
     * then for {@code threads} clients contending on one key for {@code contendedFor}:
     * after the timed runs, so that reading the counters never overlaps a measurement.
     */
    static ConsensusResults.CallProfile calls(ConsensusTarget target, ConsensusImplementation implementation,
            int cycles, int threads, Duration contendedFor) throws InterruptedException {
        Store store = implementation.store();
        Map<String, Double> perCycle;
        try (LockAdapter adapter = implementation.open(target)) {
            Adapters.prime(adapter);
            String key = "bench:calls:" + UUID.randomUUID();
            // Warm: the counted cycles run the steady path, not class loading.
            for (int i = 0; i < 20; i++) {
                adapter.runLocked(key, () -> {
                });
            }
            Map<String, Double> before = ServerCalls.read(store, target);
            for (int i = 0; i < cycles; i++) {
                adapter.runLocked(key, () -> {
                });
            }
            perCycle = ServerCalls.perUnit(before, ServerCalls.read(store, target), cycles);
        }
        List<LockAdapter> opened = new ArrayList<>();
        try {
            for (int i = 0; i < threads; i++) {
                opened.add(implementation.open(target));
            }
            opened.forEach(Adapters::prime);
            Map<String, Double> before = ServerCalls.read(store, target);
            SharedResource.InJvm resource = new SharedResource.InJvm();
            ContendedRun.Outcome outcome = ContendedRun.run(opened, "bench:calls:contended:" + UUID.randomUUID(),
                    resource, 0, Duration.ZERO, contendedFor, target.waitTime());
            Map<String, Double> perAcquisition = ServerCalls.perUnit(before, ServerCalls.read(store, target),
                    outcome.totalAcquisitions);
            return new ConsensusResults.CallProfile(implementation.name(), cycles, perCycle, outcome.totalAcquisitions,
                    perAcquisition);
        }
        finally {
            Adapters.closeAll(opened);
        }
    }

    private static ContendedResult contendedInFork(ConsensusTarget target, ConsensusImplementation implementation,
            int threads, Duration warmup, Duration measure) {
        List<String> args = new ArrayList<>();
        target.systemProperties().forEach((name, value) -> args.add("--" + name + "=" + value));
        args.addAll(List.of("--implementation=" + implementation.name(), "--threads=" + threads,
                "--wait-time=" + target.waitTime().toMillis() + "ms", "--warmup=" + warmup.toMillis() + "ms",
                "--measure=" + measure.toMillis() + "ms"));
        String json = Forks.call(ContendedFork.class, args,
                warmup.plus(measure).plus(target.waitTime()).plusMinutes(2));
        try {
            return Json.MAPPER.readValue(json, new TypeReference<ContendedResult>() {
            });
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The forked JVM of one contended run: the servers come as arguments. */
    public static final class ContendedFork {

        private ContendedFork() {
        }

        /**
         * @param args the server properties of {@link ConsensusTarget#systemProperties()}
         * as {@code --name=value}, then {@code --implementation --threads --wait-time
         * --warmup --measure}
         * @throws InterruptedException if interrupted
         */
        public static void main(String[] args) throws InterruptedException {
            Arguments arguments = Arguments.parse(args);
            for (String property : List.of(ConsensusTarget.ETCD_PROPERTY, ConsensusTarget.ZOOKEEPER_PROPERTY,
                    ConsensusTarget.REDIS_PROPERTY)) {
                System.setProperty(property, arguments.string(property, ""));
            }
            ConsensusTarget target = ConsensusTarget
                .fromSystemProperties(arguments.duration("wait-time", RedisTarget.DEFAULT_WAIT));
            ContendedResult result = contended(target,
                    ConsensusImplementation.valueOf(arguments.string("implementation", "")),
                    arguments.integer("threads", 8), arguments.duration("warmup", Duration.ofSeconds(5)),
                    arguments.duration("measure", Duration.ofSeconds(15)));
            Forks.reportAndExit(result);
        }

    }

}
