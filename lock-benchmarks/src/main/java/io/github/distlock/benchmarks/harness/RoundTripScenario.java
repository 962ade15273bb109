package io.github.distlock.benchmarks.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import io.github.distlock.benchmarks.adapter.FirstUse;
import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.adapter.LockAdapter;
import io.github.distlock.benchmarks.adapter.RedisTarget;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Scenario 3: what one uncontended cycle costs the server. Counts are exact, not timed,
 * so it runs once, in this JVM.
 * <ol>
 * <li>{@code INFO commandstats} deltas over K cycles: commands the server executed per
 * cycle, script-internal ones included;</li>
 * <li>{@code MONITOR} over another K cycles: commands clients sent per cycle (round
 * trips);</li>
 * <li>{@code MONITOR} of one more cycle, as a transcript;</li>
 * <li>the server's CPU time ({@code INFO cpu}, user plus system, so socket I/O counts
 * too) per cycle while {@value #LOADED_THREADS} threads, each on its own key, run cycles
 * through the one client for a fixed time, after a warm-up; in the same window, the
 * socket reads the server processed per cycle ({@code INFO stats total_reads_processed})
 * and the client's connections ({@code INFO clients}). Fewer than one read per command
 * means the client pipelines: it writes several threads' commands on one connection
 * before the server reads them.</li>
 * </ol>
 * Background traffic in those windows (watchdog, pings) is counted too: it is part of the
 * cost.
 *
 * <p>
 * The CPU time is the one figure here that is timed, so it is taken from a busy server.
 * Timed over one thread's cycles, the server sleeps between commands and wakes to cold
 * caches each time: on this project's 2-core VM that figure moved by 2x between runs, and
 * between two implementations that send the server identical commands.
 */
public final class RoundTripScenario {

    private static final Runnable EMPTY = () -> {
    };

    private static final int WARMUP_CYCLES = 20;

    /** Threads in the CPU window: as many as in scenario 1's 8-thread run. */
    public static final int LOADED_THREADS = 8;

    private RoundTripScenario() {
    }

    /**
     * Measures one implementation.
     * @param server the server, used by nothing else meanwhile
     * @param implementation what to measure
     * @param cycles K
     * @param cpuWarmup how long {@value #LOADED_THREADS} threads run cycles before their
     * CPU window
     * @param cpuMeasure the CPU window
     * @return the counts
     */
    public static RoundTripResult run(RedisTestServer server, Implementation implementation, int cycles,
            Duration cpuWarmup, Duration cpuMeasure) {
        RedisTarget target = RedisTarget.of(server.host(), server.port());
        String key = "bench:cost:" + implementation.name().toLowerCase(java.util.Locale.ROOT);
        try (LockAdapter adapter = implementation.open(target)) {
            // Connections, script loading and subscriptions happen here, not in the
            // counted cycles.
            FirstUse.cycle(adapter, key);
            cycle(adapter, key, WARMUP_CYCLES);

            CommandStats.reset(server);
            cycle(adapter, key, cycles);
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
                transcript = monitor.allCommandsBetween("counted", "end")
                    .stream()
                    .map(MonitorRecorder::readable)
                    .toList();
            }
            LoadedWindow loaded = loadedWindow(server, adapter, key, cpuWarmup, cpuMeasure);
            return new RoundTripResult(implementation.name(), cycles, clientCommands.size() / (double) cycles,
                    CommandStats.total(calls) / (double) cycles, loaded.cpuMicrosPerCycle(), loaded.readsPerCycle(),
                    loaded.connections(), CommandStats.per(calls, cycles), transcript);
        }
    }

    /**
     * What the server did per cycle while {@value #LOADED_THREADS} threads ran cycles.
     */
    private record LoadedWindow(double cpuMicrosPerCycle, double readsPerCycle, int connections) {
    }

    /**
     * The server's CPU time and socket reads per cycle while {@value #LOADED_THREADS}
     * threads run cycles on their own keys, measured over {@code measure} after
     * {@code warmup}, and the connections open meanwhile.
     */
    private static LoadedWindow loadedWindow(RedisTestServer server, LockAdapter adapter, String key, Duration warmup,
            Duration measure) {
        AtomicBoolean running = new AtomicBoolean(true);
        LongAdder completed = new LongAdder();
        List<CompletableFuture<Void>> threads = new ArrayList<>();
        for (int t = 0; t < LOADED_THREADS; t++) {
            String ownKey = key + ":loaded:" + t;
            threads.add(CompletableFuture.runAsync(() -> {
                while (running.get()) {
                    adapter.runLocked(ownKey, EMPTY);
                    completed.increment();
                }
            }, RoundTripScenario::daemon));
        }
        try {
            sleep(warmup, threads);
            double cpuBefore = CommandStats.cpuSeconds(server);
            long readsBefore = CommandStats.readsProcessed(server);
            long cyclesBefore = completed.sum();
            sleep(measure, threads);
            double cpuAfter = CommandStats.cpuSeconds(server);
            long readsAfter = CommandStats.readsProcessed(server);
            long cycles = completed.sum() - cyclesBefore;
            int connections = CommandStats.clientConnections(server);
            if (cycles == 0) {
                throw new IllegalStateException("no cycle completed in the CPU window of " + measure);
            }
            return new LoadedWindow((cpuAfter - cpuBefore) * 1e6 / cycles, (readsAfter - readsBefore) / (double) cycles,
                    connections);
        }
        finally {
            running.set(false);
            // A failed thread's exception fails the scenario; the adapter is closed only
            // once all stopped.
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).join();
        }
    }

    /** Sleeps for {@code duration}, but throws at once should one of the threads fail. */
    private static void sleep(Duration duration, List<CompletableFuture<Void>> threads) {
        CompletableFuture<Object> anyFailed = CompletableFuture.anyOf(threads.toArray(CompletableFuture[]::new));
        try {
            anyFailed.get(duration.toNanos(), TimeUnit.NANOSECONDS);
            throw new IllegalStateException("a thread of the CPU window stopped early");
        }
        catch (TimeoutException ex) {
            // the normal case: every thread still runs
        }
        catch (ExecutionException ex) {
            throw new IllegalStateException("a thread of the CPU window failed", ex.getCause());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while measuring the server's CPU time", ex);
        }
    }

    private static void daemon(Runnable runnable) {
        Thread thread = new Thread(runnable, "roundtrips-cpu");
        thread.setDaemon(true);
        thread.start();
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
     * @param clientCommandsPerCycle commands clients sent per cycle (MONITOR,
     * script-internal excluded)
     * @param serverCommandsPerCycle commands the server executed per cycle (commandstats)
     * @param serverCpuMicrosPerCycle the server's CPU time per cycle, user plus system,
     * in µs, while {@value #LOADED_THREADS} threads run cycles
     * @param serverReadsPerCycle socket reads the server processed per cycle in that
     * window; below the client round trips per cycle when the client pipelines
     * @param clientConnections the client's connections to the server at the end of that
     * window
     * @param serverCommandsBreakdown the same per command name
     * @param oneCycle MONITOR transcript of one cycle
     */
    public record RoundTripResult(String implementation, int cycles, double clientCommandsPerCycle,
            double serverCommandsPerCycle, double serverCpuMicrosPerCycle, double serverReadsPerCycle,
            int clientConnections, Map<String, Double> serverCommandsBreakdown, List<String> oneCycle) {
    }

}
