package io.github.distlock.benchmarks.harness;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.distlock.benchmarks.adapter.FirstUse;
import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.adapter.LeaseHolder;
import io.github.distlock.benchmarks.adapter.LeaseHolder.Lease;
import io.github.distlock.benchmarks.adapter.RedisTarget;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Scenario 4: the cost of keeping many leases alive. One client takes N locks with a
 * short ttl and renewal on, and holds them:
 * <ol>
 * <li>heap: used heap after full GCs, before and while the locks are held, per lock;</li>
 * <li>hold window: process CPU and {@code INFO commandstats} deltas (server
 * commands/s);</li>
 * <li>monitor window, locks still held: {@code MONITOR} counts client round trips/s;</li>
 * <li>release: every lease must still be ours, or renewal failed;</li>
 * <li>idle baseline: process CPU of the same client holding nothing.</li>
 * </ol>
 * Meant for a JVM of its own ({@link #main}) so the CPU and heap belong to this client
 * alone.
 */
public final class WatchdogScenario {

    /** Every implementation measured renews a lease after a third of its ttl. */
    static final double RENEWAL_FRACTION = 1.0 / 3;

    private WatchdogScenario() {
    }

    /**
     * Runs {@link #main} in a fresh JVM with its own redis-server.
     * @param implementation one that {@link Implementation#renewsLeases() renews leases}
     * @param locks N
     * @param ttl the lease
     * @param hold the CPU and commandstats window
     * @param monitor the MONITOR window
     * @param idle the idle-CPU baseline window
     * @return the measurements
     */
    public static WatchdogResult runInFork(Implementation implementation, int locks, Duration ttl, Duration hold,
            Duration monitor, Duration idle) {
        String json = Forks.call(WatchdogScenario.class,
                List.of("--implementation=" + implementation.name(), "--locks=" + locks,
                        "--ttl=" + ttl.toMillis() + "ms", "--hold=" + hold.toMillis() + "ms",
                        "--monitor=" + monitor.toMillis() + "ms", "--idle=" + idle.toMillis() + "ms"),
                hold.plus(monitor).plus(idle).plusMinutes(3));
        return Json.read(json, WatchdogResult.class);
    }

    /**
     * Measures one implementation in this JVM.
     * @param server the server, used by nothing else meanwhile
     * @param implementation one that {@link Implementation#renewsLeases() renews leases}
     * @param locks N
     * @param ttl the lease
     * @param hold the CPU and commandstats window
     * @param monitor the MONITOR window
     * @param idle the idle-CPU baseline window
     * @return the measurements
     * @throws InterruptedException if interrupted
     */
    public static WatchdogResult run(RedisTestServer server, Implementation implementation, int locks, Duration ttl,
            Duration hold, Duration monitor, Duration idle) throws InterruptedException {
        RedisTarget target = RedisTarget.of(server.host(), server.port());
        try (LeaseHolder holder = implementation.openLeaseHolder(target, ttl)) {
            // One lock taken and released first, so that lazily created machinery
            // (schedulers, scripts)
            // is not counted as per-lock heap.
            FirstUse.run("the first lease", attempt -> holder.hold("bench:watchdog:warmup:" + attempt).release());
            settle();

            long heapBefore = usedHeapAfterGc();
            List<Lease> leases = new ArrayList<>(locks);
            long acquireStart = System.nanoTime();
            for (int i = 0; i < locks; i++) {
                leases.add(holder.hold("bench:watchdog:" + i));
            }
            double acquireSeconds = (System.nanoTime() - acquireStart) / 1e9;
            long heapWhileHeld = usedHeapAfterGc();

            CommandStats.reset(server);
            long cpuStart = processCpuNanos();
            long wallStart = System.nanoTime();
            Thread.sleep(hold.toMillis());
            double heldSeconds = (System.nanoTime() - wallStart) / 1e9;
            long cpu = processCpuNanos() - cpuStart;
            Map<String, Long> calls = CommandStats.read(server);

            int clientCommands;
            double monitoredSeconds;
            try (MonitorRecorder recorder = new MonitorRecorder(server)) {
                recorder.mark("start");
                long monitorStart = System.nanoTime();
                Thread.sleep(monitor.toMillis());
                recorder.mark("end");
                monitoredSeconds = (System.nanoTime() - monitorStart) / 1e9;
                clientCommands = recorder.clientCommandsBetween("start", "end").size();
            }

            long lost = 0;
            for (Lease lease : leases) {
                if (!lease.release()) {
                    lost++;
                }
            }
            leases.clear();
            // The baseline comes last: the same client, connected and warmed up, holding
            // nothing. Measured
            // first, it would mostly show the JIT compiling the freshly started JVM.
            settle();
            long idleCpu = processCpuNanos();
            Thread.sleep(idle.toMillis());
            double idleCpuMillisPerSecond = (processCpuNanos() - idleCpu) / 1e6 / (idle.toMillis() / 1e3);
            double roundTripsPerSecond = clientCommands / monitoredSeconds;
            double tickSeconds = ttl.toMillis() / 1e3 * RENEWAL_FRACTION;
            return new WatchdogResult(implementation.name(), locks, ttl.toMillis() / 1e3, heldSeconds, acquireSeconds,
                    CommandStats.total(calls) / heldSeconds, CommandStats.per(calls, heldSeconds), roundTripsPerSecond,
                    monitoredSeconds, roundTripsPerSecond * tickSeconds * 100.0 / locks, cpu / 1e6 / heldSeconds,
                    idleCpuMillisPerSecond, Math.max(0, heapWhileHeld - heapBefore) / (double) locks, lost);
        }
    }

    /**
     * The forked JVM's entry point: starts its own redis-server, measures, prints the
     * result as one JSON line.
     * @param args {@code --implementation --locks --ttl --hold --monitor --idle}
     * @throws Exception if the measurement fails
     */
    public static void main(String[] args) throws Exception {
        Arguments arguments = Arguments.parse(args);
        WatchdogResult result;
        try (RedisTestServer server = RedisTestServer.start()) {
            result = run(server, Implementation.valueOf(arguments.string("implementation", "")),
                    arguments.integer("locks", 10_000), arguments.duration("ttl", Duration.ofSeconds(3)),
                    arguments.duration("hold", Duration.ofSeconds(30)),
                    arguments.duration("monitor", Duration.ofSeconds(3)),
                    arguments.duration("idle", Duration.ofSeconds(3)));
        }
        Forks.reportAndExit(result);
    }

    private static void settle() throws InterruptedException {
        Thread.sleep(500);
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    }

    /** Used heap after full collections, the closest the JVM comes to "live bytes". */
    private static long usedHeapAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return memory.getHeapMemoryUsage().getUsed();
    }

    /**
     * Cost of holding N leases.
     *
     * @param implementation the implementation name
     * @param locks N
     * @param ttlSeconds the lease
     * @param heldSeconds the CPU and commandstats window
     * @param acquireSeconds how long taking the N locks took
     * @param serverCommandsPerSecond commands the server executed per second
     * (script-internal included)
     * @param serverCommandsBreakdown the same per command
     * @param roundTripsPerSecond commands clients sent per second (MONITOR)
     * @param monitoredSeconds the MONITOR window
     * @param roundTripsPer100LocksPerTick round trips per renewal tick (ttl/3) per 100
     * held locks
     * @param cpuMillisPerSecond process CPU while holding, ms per second
     * @param idleCpuMillisPerSecond process CPU after releasing them all (the baseline)
     * @param heapBytesPerLock used heap per held lock
     * @param lost leases that were no longer ours at release: renewal failed
     */
    public record WatchdogResult(String implementation, int locks, double ttlSeconds, double heldSeconds,
            double acquireSeconds, double serverCommandsPerSecond, Map<String, Double> serverCommandsBreakdown,
            double roundTripsPerSecond, double monitoredSeconds, double roundTripsPer100LocksPerTick,
            double cpuMillisPerSecond, double idleCpuMillisPerSecond, double heapBytesPerLock, long lost) {
    }

}
