package io.github.distlock.benchmarks.harness;

import java.time.Duration;
import java.util.List;

import io.github.distlock.benchmarks.adapter.Implementation;

/**
 * Sizes and durations of scenarios 2 to 5. Two profiles: {@code full} (the published
 * numbers) and {@code smoke} (every scenario once, briefly, to prove that nothing is
 * broken). Any value can be overridden by an argument of the same name, e.g.
 * {@code --watchdog-hold=10s}.
 *
 * @param profile {@code full} or {@code smoke}
 * @param forks how many JVMs to repeat each measurement in (the report shows medians); 0
 * runs scenarios 2 and 4 in this JVM, once
 * @param implementations what to measure
 * @param scenarios which of {@code contended, roundtrips, watchdog, processes} to run
 * @param waitTime how long a contended acquisition may wait
 * @param contendedThreads threads on the one key in scenario 2
 * @param contendedWarmup warm-up before the scenario 2 window
 * @param contendedMeasure the scenario 2 window
 * @param roundTripCycles cycles counted per implementation in scenario 3
 * @param roundTripCpuWarmup scenario 3: warm-up before the server's CPU time is measured
 * under load
 * @param roundTripCpuMeasure scenario 3: the window the server's CPU time is measured
 * over
 * @param watchdogLocks locks held at once in scenario 4
 * @param watchdogTtl their lease
 * @param watchdogHold how long CPU and server commands are measured while they are held
 * @param watchdogMonitor how long MONITOR then counts client round trips while they are
 * still held
 * @param watchdogIdle how long the idle CPU baseline is measured before acquiring
 * @param processCount JVMs in scenario 5
 * @param processThreads threads per JVM in scenario 5
 * @param processWarmup warm-up before the scenario 5 window
 * @param processMeasure the scenario 5 window
 * @param pauseWarmup Redlock with a paused node: cycles before the healthy window
 * @param pauseMeasure Redlock with a paused node: the length of the healthy and of the
 * paused window
 * @param redlockNodeTimeout {@code distributed-lock.redlock.node-timeout} of ours as a
 * Redlock, e.g. {@code 500ms}; empty (the default) keeps the starter's default
 */
public record HarnessSettings(String profile, int forks, List<Implementation> implementations, List<String> scenarios,
        Duration waitTime, int contendedThreads, Duration contendedWarmup, Duration contendedMeasure,
        int roundTripCycles, Duration roundTripCpuWarmup, Duration roundTripCpuMeasure, int watchdogLocks,
        Duration watchdogTtl, Duration watchdogHold, Duration watchdogMonitor, Duration watchdogIdle, int processCount,
        int processThreads, Duration processWarmup, Duration processMeasure, Duration pauseWarmup,
        Duration pauseMeasure, String redlockNodeTimeout) {

    /** The scenarios of the harness on one Redis, in the order they run: the default. */
    public static final List<String> ALL_SCENARIOS = List.of("contended", "roundtrips", "watchdog", "processes");

    /**
     * Every scenario there is: {@link #ALL_SCENARIOS} and {@code pause} (a Redlock with
     * one node stopped), which only the Redlock part of the suite asks for.
     */
    public static final List<String> KNOWN_SCENARIOS = List.of("contended", "roundtrips", "watchdog", "processes",
            "pause");

    /**
     * @param arguments {@code --profile=full|smoke} plus overrides
     * @return the settings
     */
    public static HarnessSettings from(Arguments arguments) {
        String profile = arguments.string("profile", "full");
        boolean smoke = switch (profile) {
            case "full" -> false;
            case "smoke" -> true;
            default -> throw new IllegalArgumentException("--profile must be full or smoke, was " + profile);
        };
        String scenarios = arguments.string("scenarios", String.join(",", ALL_SCENARIOS));
        List<String> chosen = List.of(scenarios.split(","));
        for (String scenario : chosen) {
            if (!KNOWN_SCENARIOS.contains(scenario)) {
                throw new IllegalArgumentException("unknown scenario " + scenario + "; known: " + KNOWN_SCENARIOS);
            }
        }
        return new HarnessSettings(profile, arguments.integer("forks", smoke ? 0 : 3),
                Implementation.parseList(arguments.string("implementations", "all")), chosen,
                arguments.duration("wait-time", Duration.ofSeconds(10)), arguments.integer("contended-threads", 8),
                arguments.duration("contended-warmup", smoke ? Duration.ofMillis(200) : Duration.ofSeconds(5)),
                arguments.duration("contended-measure", smoke ? Duration.ofMillis(700) : Duration.ofSeconds(15)),
                arguments.integer("roundtrip-cycles", smoke ? 50 : 1000),
                arguments.duration("roundtrip-cpu-warmup", smoke ? Duration.ofMillis(200) : Duration.ofSeconds(3)),
                arguments.duration("roundtrip-cpu-measure", smoke ? Duration.ofMillis(300) : Duration.ofSeconds(5)),
                arguments.integer("watchdog-locks", smoke ? 300 : 10_000),
                // Smoke: a shorter lease, and hold + monitor together outlast it, so a
                // lease that is not
                // renewed is still caught (as lost) in little time.
                arguments.duration("watchdog-ttl", smoke ? Duration.ofMillis(1500) : Duration.ofSeconds(3)),
                arguments.duration("watchdog-hold", smoke ? Duration.ofSeconds(1) : Duration.ofSeconds(30)),
                arguments.duration("watchdog-monitor", smoke ? Duration.ofMillis(800) : Duration.ofSeconds(3)),
                arguments.duration("watchdog-idle", smoke ? Duration.ofMillis(200) : Duration.ofSeconds(3)),
                arguments.integer("process-count", 2), arguments.integer("process-threads", 8),
                arguments.duration("process-warmup", smoke ? Duration.ofMillis(200) : Duration.ofSeconds(3)),
                arguments.duration("process-measure", smoke ? Duration.ofMillis(700) : Duration.ofSeconds(15)),
                arguments.duration("pause-warmup", smoke ? Duration.ofMillis(300) : Duration.ofSeconds(5)),
                arguments.duration("pause-measure", smoke ? Duration.ofMillis(700) : Duration.ofSeconds(15)),
                arguments.string("redlock-node-timeout", "").trim());
    }

    /**
     * @param scenario one of {@link #ALL_SCENARIOS}
     * @return whether it runs
     */
    public boolean runs(String scenario) {
        return scenarios.contains(scenario);
    }
}
