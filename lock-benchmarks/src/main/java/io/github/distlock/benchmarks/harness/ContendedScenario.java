package io.github.distlock.benchmarks.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;

import com.fasterxml.jackson.core.type.TypeReference;

import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.adapter.LockAdapter;
import io.github.distlock.benchmarks.adapter.RedisNodes;
import io.github.distlock.benchmarks.adapter.RedisTarget;

/**
 * Scenario 2: N threads of one JVM on ONE key, in two modes.
 * <ul>
 * <li>{@code isolated}: every thread opens its own client (own connections, own lock
 * service, own pub/sub subscription), which is what separate application instances see;
 * the headline;</li>
 * <li>{@code shared}: all threads share one client, as the threads of one instance do;
 * in-JVM shortcuts (Spring Integration's local lock, Redisson's shared subscription) show
 * here.</li>
 * </ul>
 * Runs in this JVM ({@link #run}) or, for the full suite, in a fresh JVM per fork
 * ({@link #main}).
 */
public final class ContendedScenario {

    /** The modes, in the order they run. */
    public static final List<String> MODES = List.of("isolated", "shared");

    private ContendedScenario() {
    }

    /**
     * Runs both modes for one implementation in this JVM.
     * @param target the Redis and the wait time
     * @param implementation what to measure
     * @param threads contending threads
     * @param warmup warm-up before the window
     * @param measure the window
     * @return one result per mode
     * @throws InterruptedException if interrupted
     */
    public static List<ContendedResult> run(RedisTarget target, Implementation implementation, int threads,
            Duration warmup, Duration measure) throws InterruptedException {
        List<ContendedResult> results = new ArrayList<>();
        for (String mode : MODES) {
            List<LockAdapter> opened = new ArrayList<>();
            try {
                List<LockAdapter> perThread;
                if (mode.equals("isolated")) {
                    for (int i = 0; i < threads; i++) {
                        opened.add(implementation.open(target));
                    }
                    perThread = opened;
                }
                else {
                    opened.add(implementation.open(target));
                    perThread = Collections.nCopies(threads, opened.get(0));
                }
                opened.forEach(Adapters::prime);
                SharedResource.InJvm resource = new SharedResource.InJvm();
                // A fresh key per run: a lease left behind by an earlier, killed fork
                // cannot block this one.
                String key = "bench:contended:" + mode + ":" + UUID.randomUUID();
                ContendedRun.Outcome outcome = ContendedRun.run(perThread, key, resource, 0, warmup, measure,
                        target.waitTime());
                // Read after every thread was joined, so the plain field is up to date.
                results.add(ContendedResult.of(implementation.name(), mode, outcome, resource.counter()));
            }
            finally {
                Adapters.closeAll(opened);
            }
        }
        return results;
    }

    /**
     * Runs {@link #run} in a fresh JVM with its own redis-server(s).
     * @param waitTime how long a contended acquisition may wait
     * @param implementation what to measure
     * @param threads contending threads
     * @param warmup warm-up
     * @param measure window
     * @return one result per mode
     */
    public static List<ContendedResult> runInFork(Duration waitTime, Implementation implementation, int threads,
            Duration warmup, Duration measure) {
        String json = Forks.call(ContendedScenario.class,
                List.of("--wait-time=" + waitTime.toMillis() + "ms", "--implementation=" + implementation.name(),
                        "--threads=" + threads, "--warmup=" + warmup.toMillis() + "ms",
                        "--measure=" + measure.toMillis() + "ms"),
                warmup.plus(measure).multipliedBy(MODES.size()).plus(waitTime).plusMinutes(2));
        try {
            return Json.MAPPER.readValue(json, new TypeReference<List<ContendedResult>>() {
            });
        }
        catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    /**
     * The forked JVM's entry point: starts its own redis-server (one per node for a
     * Redlock), runs both modes, prints the results as one JSON line.
     * @param args {@code --wait-time --implementation --threads --warmup --measure}
     * @throws InterruptedException if interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        Arguments arguments = Arguments.parse(args);
        List<ContendedResult> results;
        Implementation implementation = Implementation.valueOf(arguments.string("implementation", ""));
        try (RedisNodes servers = RedisNodes.startFor(implementation)) {
            RedisTarget target = servers.target(arguments.duration("wait-time", RedisTarget.DEFAULT_WAIT));
            results = run(target, implementation, arguments.integer("threads", 8),
                    arguments.duration("warmup", Duration.ofSeconds(5)),
                    arguments.duration("measure", Duration.ofSeconds(15)));
        }
        Forks.reportAndExit(results);
    }

}
