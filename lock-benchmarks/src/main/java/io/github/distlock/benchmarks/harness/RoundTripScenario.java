package io.github.distlock.benchmarks.harness;

import java.util.List;
import java.util.Map;

import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.adapter.LockAdapter;
import io.github.distlock.benchmarks.adapter.RedisTarget;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Scenario 3: what one uncontended cycle costs the server. Counts are exact, not timed, so it runs
 * once, in this JVM.
 * <ol>
 *   <li>{@code INFO commandstats} deltas over K cycles: commands the server executed per cycle,
 *       script-internal ones included; over the same cycles, the server's CPU time ({@code INFO cpu},
 *       user plus system, so socket I/O counts too);</li>
 *   <li>{@code MONITOR} over another K cycles: commands clients sent per cycle (round trips);</li>
 *   <li>{@code MONITOR} of one more cycle, as a transcript.</li>
 * </ol>
 * Background traffic in those windows (watchdog, pings) is counted too: it is part of the cost.
 *
 * <p>The CPU time is the one figure here that is timed. One thread runs the cycles, so the server
 * sleeps between commands and pays for cold caches each time: the figure is larger than the
 * same work costs a busy server, but it is measured alike for every implementation.
 */
public final class RoundTripScenario {

    private static final Runnable EMPTY = () -> { };
    private static final int WARMUP_CYCLES = 20;

    private RoundTripScenario() {
    }

    /**
     * Measures one implementation.
     *
     * @param server the server, used by nothing else meanwhile
     * @param implementation what to measure
     * @param cycles K
     * @return the counts
     */
    public static RoundTripResult run(RedisTestServer server, Implementation implementation, int cycles) {
        RedisTarget target = RedisTarget.of(server.host(), server.port());
        String key = "bench:cost:" + implementation.name().toLowerCase(java.util.Locale.ROOT);
        try (LockAdapter adapter = implementation.open(target)) {
            // Connections, script loading and subscriptions happen here, not in the counted cycles.
            cycle(adapter, key, WARMUP_CYCLES);

            CommandStats.reset(server);
            double cpuBefore = CommandStats.cpuSeconds(server);
            cycle(adapter, key, cycles);
            double cpuAfter = CommandStats.cpuSeconds(server);
            Map<String, Long> calls = CommandStats.read(server);

            List<String> clientCommands;
            List<String> transcript;
            try (MonitorRecorder monitor = new MonitorRecorder(server)) {
                monitor.mark("start");
                cycle(adapter, key, cycles);
                monitor.mark("counted");
                cycle(adapter, key, 1);
                monitor.mark("end");
                clientCommands = monitor.clientCommandsBetween("start", "counted");
                transcript = monitor.allCommandsBetween("counted", "end").stream()
                        .map(MonitorRecorder::readable)
                        .toList();
            }
            return new RoundTripResult(implementation.name(), cycles, clientCommands.size() / (double) cycles,
                    CommandStats.total(calls) / (double) cycles, (cpuAfter - cpuBefore) * 1e6 / cycles,
                    CommandStats.per(calls, cycles), transcript);
        }
    }

    private static void cycle(LockAdapter adapter, String key, int times) {
        for (int i = 0; i < times; i++) {
            adapter.runLocked(key, EMPTY);
        }
    }

    /**
     * Cost of one uncontended cycle.
     *
     * @param implementation the implementation name
     * @param cycles K
     * @param clientCommandsPerCycle commands clients sent per cycle (MONITOR, script-internal excluded)
     * @param serverCommandsPerCycle commands the server executed per cycle (commandstats)
     * @param serverCpuMicrosPerCycle the server's CPU time per cycle, user plus system, in µs
     * @param serverCommandsBreakdown the same per command name
     * @param oneCycle MONITOR transcript of one cycle
     */
    public record RoundTripResult(String implementation, int cycles, double clientCommandsPerCycle,
            double serverCommandsPerCycle, double serverCpuMicrosPerCycle, Map<String, Double> serverCommandsBreakdown,
            List<String> oneCycle) {
    }
}
