package io.github.distlock.benchmarks.harness;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.adapter.OurApplication;
import io.github.distlock.benchmarks.adapter.RedisNodes;
import io.github.distlock.benchmarks.harness.RedlockPauseScenario.PauseResult;
import io.github.distlock.benchmarks.harness.RoundTripScenario.RoundTripResult;
import io.github.distlock.benchmarks.harness.WatchdogScenario.WatchdogResult;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Runs scenarios 2 to 5 ({@link HarnessSettings}) and writes {@code harness.json}; for
 * the Redlock implementations, scenario 2 and the paused-node scenario
 * ({@link RedlockPauseScenario}).
 *
 * <p>
 * A scenario that throws for one implementation is recorded as a failure and the rest
 * goes on, so that a long run still yields a page; the report then fails the build.
 */
public final class HarnessMain {

    private HarnessMain() {
    }

    /**
     * @param args {@code --profile=full|smoke}, {@code --output=harness.json} and any
     * {@link HarnessSettings} override
     * @throws Exception if the harness itself (not a measured implementation) fails
     */
    public static void main(String[] args) throws Exception {
        Arguments arguments = Arguments.parse(args);
        HarnessResults results = run(HarnessSettings.from(arguments));
        Path output = Path.of(arguments.string("output", "target/bench/harness.json"));
        Json.write(output, results);
        System.out.println("harness: wrote " + output.toAbsolutePath() + " after " + Math.round(results.seconds())
                + " s; problems: " + (results.problems().isEmpty() ? "none" : results.problems()));
        // Client libraries leave non-daemon threads behind.
        System.exit(0);
    }

    /**
     * Runs the chosen scenarios.
     * @param settings what to run
     * @return the results
     * @throws InterruptedException if interrupted
     */
    public static HarnessResults run(HarnessSettings settings) throws InterruptedException {
        long start = System.nanoTime();
        if (settings.redlockNodeTimeout() != null && !settings.redlockNodeTimeout().isEmpty()) {
            // Read by OurApplication here and passed on to every fork by Forks.
            System.setProperty(OurApplication.REDLOCK_NODE_TIMEOUT_PROPERTY, settings.redlockNodeTimeout());
        }
        List<String> failures = new ArrayList<>();
        List<ContendedResult> contended = new ArrayList<>();
        List<RoundTripResult> roundTrips = new ArrayList<>();
        List<WatchdogResult> watchdog = new ArrayList<>();
        List<ContendedResult> processes = new ArrayList<>();
        List<PauseResult> pause = new ArrayList<>();
        int repetitions = Math.max(1, settings.forks());

        // Forks are the outer loop in every scenario: one fork of each implementation,
        // then the next
        // round. The machine drifts over minutes (other VMs on the host), and an
        // implementation whose
        // forks all ran in one bad stretch would carry that stretch into the ratios.
        if (settings.runs("contended")) {
            for (int fork = 0; fork < repetitions; fork++) {
                for (Implementation implementation : settings.implementations()) {
                    log("contended", implementation, fork, repetitions);
                    try {
                        if (settings.forks() > 0) {
                            contended.addAll(ContendedScenario.runInFork(settings.waitTime(), implementation,
                                    settings.contendedThreads(), settings.contendedWarmup(),
                                    settings.contendedMeasure()));
                        }
                        else {
                            try (var servers = RedisNodes.startFor(implementation)) {
                                contended.addAll(ContendedScenario.run(servers.target(settings.waitTime()),
                                        implementation, settings.contendedThreads(), settings.contendedWarmup(),
                                        settings.contendedMeasure()));
                            }
                        }
                    }
                    catch (RuntimeException ex) {
                        failures.add(failure("contended", implementation, ex));
                    }
                }
            }
        }

        if (settings.runs("roundtrips")) {
            try (var server = RedisTestServer.start()) {
                for (Implementation implementation : settings.implementations()) {
                    if (implementation.isRedlock()) {
                        continue; // one server's INFO and MONITOR: a single-Redis
                                  // measurement
                    }
                    log("roundtrips", implementation, 0, 1);
                    try {
                        roundTrips.add(RoundTripScenario.run(server, implementation, settings.roundTripCycles(),
                                settings.roundTripCpuWarmup(), settings.roundTripCpuMeasure()));
                    }
                    catch (RuntimeException ex) {
                        failures.add(failure("roundtrips", implementation, ex));
                    }
                }
            }
        }

        if (settings.runs("watchdog")) {
            for (int fork = 0; fork < repetitions; fork++) {
                for (Implementation implementation : settings.implementations()) {
                    if (!implementation.renewsLeases()) {
                        continue;
                    }
                    log("watchdog", implementation, fork, repetitions);
                    try {
                        if (settings.forks() > 0) {
                            watchdog.add(WatchdogScenario.runInFork(implementation, settings.watchdogLocks(),
                                    settings.watchdogTtl(), settings.watchdogHold(), settings.watchdogMonitor(),
                                    settings.watchdogIdle()));
                        }
                        else {
                            try (var server = RedisTestServer.start()) {
                                watchdog.add(WatchdogScenario.run(server, implementation, settings.watchdogLocks(),
                                        settings.watchdogTtl(), settings.watchdogHold(), settings.watchdogMonitor(),
                                        settings.watchdogIdle()));
                            }
                        }
                    }
                    catch (RuntimeException ex) {
                        failures.add(failure("watchdog", implementation, ex));
                    }
                }
            }
        }

        if (settings.runs("processes")) {
            try (var server = RedisTestServer.start()) {
                for (int fork = 0; fork < repetitions; fork++) {
                    // Fresh worker JVMs per repetition: a repetition is a fork, as
                    // elsewhere.
                    ProcessesScenario scenario = newProcessesScenario(server, settings);
                    try {
                        for (Implementation implementation : settings.implementations()) {
                            if (implementation.isRedlock()) {
                                continue; // the workers share one server
                            }
                            log("processes", implementation, fork, repetitions);
                            try {
                                processes.add(scenario.run(implementation));
                            }
                            catch (RuntimeException ex) {
                                failures.add(failure("processes", implementation, ex));
                                // Its workers may be mid-protocol: start clean ones for
                                // the next implementation.
                                scenario.close();
                                scenario = newProcessesScenario(server, settings);
                            }
                        }
                    }
                    finally {
                        scenario.close();
                    }
                }
            }
        }

        if (settings.runs("pause")) {
            for (int fork = 0; fork < repetitions; fork++) {
                for (Implementation implementation : settings.implementations()) {
                    // Ours only: the target compares ours with a node paused against ours
                    // healthy. A peer's
                    // stalls on the stopped node depend on its timeouts and retries, a
                    // different question.
                    if (!implementation.isRedlock() || implementation.role() != Implementation.Role.OURS) {
                        continue;
                    }
                    log("pause", implementation, fork, repetitions);
                    try {
                        if (settings.forks() > 0) {
                            pause.add(RedlockPauseScenario.runInFork(implementation, settings.pauseWarmup(),
                                    settings.pauseMeasure()));
                        }
                        else {
                            try (var servers = RedisNodes.startFor(implementation)) {
                                pause.add(RedlockPauseScenario.run(servers, implementation, settings.pauseWarmup(),
                                        settings.pauseMeasure()));
                            }
                        }
                    }
                    catch (RuntimeException ex) {
                        failures.add(failure("pause", implementation, ex));
                    }
                }
            }
        }

        return new HarnessResults(settings, contended, roundTrips, watchdog, processes, pause, failures,
                (System.nanoTime() - start) / 1e9);
    }

    private static ProcessesScenario newProcessesScenario(RedisTestServer server, HarnessSettings settings) {
        return new ProcessesScenario(server, settings.processCount(), settings.processThreads(),
                settings.processWarmup(), settings.processMeasure(), settings.waitTime());
    }

    private static final long STARTED = System.nanoTime();

    private static void log(String scenario, Implementation implementation, int fork, int forks) {
        System.out
            .println("harness: " + String.format(java.util.Locale.ROOT, "%6.1fs ", (System.nanoTime() - STARTED) / 1e9)
                    + scenario + " " + implementation.name() + (forks > 1 ? " fork " + (fork + 1) + "/" + forks : ""));
    }

    private static String failure(String scenario, Implementation implementation, RuntimeException ex) {
        ex.printStackTrace(System.out);
        return implementation.name() + " (" + scenario + "): " + ex;
    }

}
