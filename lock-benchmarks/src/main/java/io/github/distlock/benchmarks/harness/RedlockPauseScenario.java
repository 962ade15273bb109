package io.github.distlock.benchmarks.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.HdrHistogram.Histogram;

import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.adapter.LockAdapter;
import io.github.distlock.benchmarks.adapter.RedisNodes;
import io.github.distlock.benchmarks.adapter.RedisTarget;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Redlock with one node frozen: one thread runs uncontended cycles (lock, empty section,
 * unlock) on its own key, first with all nodes healthy, then while one node is stopped
 * with {@code SIGSTOP} (alive, connections open, nothing answers: a long GC pause or a
 * partition), and the node is continued with {@code SIGCONT} after the window. Both
 * windows are timed the same way, in the same JVM, against the same client, so the paused
 * p99 is compared with a healthy p99 measured alike.
 *
 * <p>
 * Not JMH: the pause has to start and end around the measurement, which a JMH iteration
 * cannot express without leaking the pause into warm-up or the next trial.
 */
public final class RedlockPauseScenario {

    /** Which node is paused: the first of the target's nodes. */
    static final int PAUSED_NODE = 0;

    /** How many distinct error messages a result keeps; the count covers all. */
    private static final int ERRORS_KEPT = 5;

    private static final Runnable EMPTY_CRITICAL_SECTION = () -> {
    };

    private RedlockPauseScenario() {
    }

    /**
     * One run, as stored in {@code harness.json}.
     *
     * @param implementation the {@code Implementation} name
     * @param nodes how many nodes the Redlock had
     * @param pausedNode the index of the paused node
     * @param healthyCycles cycles in the healthy window
     * @param healthyP50Nanos median cycle, all nodes healthy
     * @param healthyP99Nanos 99th percentile cycle, all nodes healthy
     * @param healthyMaxNanos longest cycle, all nodes healthy
     * @param pausedCycles cycles in the paused window
     * @param pausedP50Nanos median cycle, one node paused
     * @param pausedP99Nanos 99th percentile cycle, one node paused
     * @param pausedMaxNanos longest cycle, one node paused
     * @param failedCycles cycles that threw (not acquired or a backend error), in either
     * window
     * @param errors the first few distinct failures
     * @param recovered whether a cycle succeeded after the node was continued
     */
    public record PauseResult(String implementation, int nodes, int pausedNode, long healthyCycles,
            long healthyP50Nanos, long healthyP99Nanos, long healthyMaxNanos, long pausedCycles, long pausedP50Nanos,
            long pausedP99Nanos, long pausedMaxNanos, long failedCycles, List<String> errors, boolean recovered) {
    }

    /**
     * Runs the scenario in this JVM against running servers.
     * @param servers the Redlock's nodes, all running
     * @param implementation a Redlock implementation
     * @param warmup cycles before the healthy window
     * @param measure the length of each window
     * @return the result
     */
    public static PauseResult run(RedisNodes servers, Implementation implementation, Duration warmup,
            Duration measure) {
        if (!implementation.isRedlock()) {
            throw new IllegalArgumentException(implementation + " is not a Redlock: there is no node to pause");
        }
        RedisTarget target = servers.target(RedisTarget.DEFAULT_WAIT);
        RedisTestServer paused = servers.servers().get(PAUSED_NODE);
        LockAdapter adapter = implementation.open(target);
        try {
            Adapters.prime(adapter);
            String key = "bench:pause:" + UUID.randomUUID();
            List<String> errors = new ArrayList<>();
            long[] failed = new long[1];
            cycles(adapter, key, warmup, null, errors, failed);
            Histogram healthy = ContendedRun.newHistogram();
            cycles(adapter, key, measure, healthy, errors, failed);
            Histogram whilePaused = ContendedRun.newHistogram();
            paused.pause();
            try {
                cycles(adapter, key, measure, whilePaused, errors, failed);
            }
            finally {
                paused.resume();
            }
            boolean recovered;
            try {
                adapter.runLocked(key + ":after", EMPTY_CRITICAL_SECTION);
                recovered = true;
            }
            catch (RuntimeException ex) {
                errors.add("after SIGCONT: " + ex);
                recovered = false;
            }
            return new PauseResult(implementation.name(), target.nodePorts().size(), PAUSED_NODE,
                    healthy.getTotalCount(), percentile(healthy, 50), percentile(healthy, 99), healthy.getMaxValue(),
                    whilePaused.getTotalCount(), percentile(whilePaused, 50), percentile(whilePaused, 99),
                    whilePaused.getMaxValue(), failed[0], List.copyOf(errors), recovered);
        }
        finally {
            Adapters.closeAll(List.of(adapter));
        }
    }

    /**
     * Runs cycles for {@code length}, recording each successful one's time in
     * {@code times} if given.
     */
    private static void cycles(LockAdapter adapter, String key, Duration length, Histogram times, List<String> errors,
            long[] failed) {
        long end = System.nanoTime() + length.toNanos();
        while (System.nanoTime() - end < 0) {
            long start = System.nanoTime();
            try {
                adapter.runLocked(key, EMPTY_CRITICAL_SECTION);
            }
            catch (RuntimeException ex) {
                failed[0]++;
                String message = ex.toString();
                if (errors.size() < ERRORS_KEPT && !errors.contains(message)) {
                    errors.add(message);
                }
                continue;
            }
            if (times != null) {
                times.recordValue(Math.min(System.nanoTime() - start, ContendedRun.MAX_TRACKED_NANOS));
            }
        }
    }

    private static long percentile(Histogram histogram, double percentile) {
        return histogram.getTotalCount() == 0 ? 0 : histogram.getValueAtPercentile(percentile);
    }

    /**
     * Runs {@link #run} in a fresh JVM with its own servers.
     * @param implementation a Redlock implementation
     * @param warmup warm-up
     * @param measure each window
     * @return the result
     */
    public static PauseResult runInFork(Implementation implementation, Duration warmup, Duration measure) {
        String json = Forks.call(
                RedlockPauseScenario.class, List.of("--implementation=" + implementation.name(),
                        "--warmup=" + warmup.toMillis() + "ms", "--measure=" + measure.toMillis() + "ms"),
                warmup.plus(measure.multipliedBy(2)).plusMinutes(2));
        return Json.read(json, PauseResult.class);
    }

    /**
     * The forked JVM's entry point: starts the nodes, runs, prints the result as one JSON
     * line.
     * @param args {@code --implementation --warmup --measure}
     */
    public static void main(String[] args) {
        Arguments arguments = Arguments.parse(args);
        Implementation implementation = Implementation.valueOf(arguments.string("implementation", ""));
        PauseResult result;
        try (RedisNodes servers = RedisNodes.startFor(implementation)) {
            result = run(servers, implementation, arguments.duration("warmup", Duration.ofSeconds(5)),
                    arguments.duration("measure", Duration.ofSeconds(15)));
        }
        Forks.reportAndExit(result);
    }

}
