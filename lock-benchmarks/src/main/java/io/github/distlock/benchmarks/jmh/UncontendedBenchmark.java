package io.github.distlock.benchmarks.jmh;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import io.github.distlock.benchmarks.adapter.FirstUse;
import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.adapter.LockAdapter;
import io.github.distlock.benchmarks.adapter.RedisNodes;
import io.github.distlock.benchmarks.adapter.RedisTarget;

/**
 * Scenario 1: one uncontended cycle (acquire, empty critical section, release), each
 * thread on its own key, at 1 and 8 threads sharing one client per implementation (as the
 * threads of one application do). Throughput gives cycles/s; SampleTime gives the
 * distribution of one cycle.
 *
 * <p>
 * Each trial starts its own redis-server (persistence off, free port) in the JMH fork, so
 * no implementation inherits keys, scripts or connections from another; a Redlock
 * implementation gets its own independent servers, one per node, started the same way.
 * The annotations here are defaults for running the class by hand; {@link JmhMain} sets
 * the suite's values.
 */
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class UncontendedBenchmark {

    private static final Runnable EMPTY_CRITICAL_SECTION = () -> {
    };

    /**
     * One redis-server and one client of the implementation under test, shared by all
     * threads.
     */
    @State(Scope.Benchmark)
    public static class Client {

        /** The implementation, by {@link Implementation} constant name. */
        @Param({ "OURS_SERVICE", "OURS_SERVICE_JEDIS", "OURS_ANNOTATION", "OURS_SERVICE_MICROMETER", "REDISSON_RLOCK",
                "REDISSON_FENCED", "SI_PUB_SUB", "SI_SPIN", "FLOOR", "OURS_REDLOCK", "REDISSON_REDLOCK" })
        public String implementation;

        RedisNodes servers;

        LockAdapter adapter;

        /**
         * Starts the server (or a Redlock's independent servers) and opens the client.
         */
        @Setup(Level.Trial)
        public void start() {
            Implementation measured = Implementation.valueOf(implementation);
            servers = RedisNodes.startFor(measured);
            adapter = measured.open(servers.target(RedisTarget.DEFAULT_WAIT));
            // Lazily opened connections and subscriptions belong to setup, not to the
            // first iteration.
            FirstUse.cycle(adapter, "bench:prime:" + implementation);
        }

        /** Closes the client, then the servers. */
        @TearDown(Level.Trial)
        public void stop() {
            try {
                if (adapter != null) {
                    adapter.close();
                }
            }
            finally {
                servers.close();
            }
        }

    }

    /** The calling thread's own key, so that nothing contends. */
    @State(Scope.Thread)
    public static class OwnKey {

        private static final AtomicLong SEQUENCE = new AtomicLong();

        String key;

        /** Picks a key no other thread uses. */
        @Setup(Level.Trial)
        public void pick() {
            key = "bench:uncontended:" + SEQUENCE.incrementAndGet();
        }

    }

    /**
     * Cycles per second, one thread.
     * @param client the implementation
     * @param ownKey this thread's key
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @Threads(1)
    public void throughput1(Client client, OwnKey ownKey) {
        client.adapter.runLocked(ownKey.key, EMPTY_CRITICAL_SECTION);
    }

    /**
     * Cycles per second, eight threads together.
     * @param client the implementation
     * @param ownKey this thread's key
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @Threads(8)
    public void throughput8(Client client, OwnKey ownKey) {
        client.adapter.runLocked(ownKey.key, EMPTY_CRITICAL_SECTION);
    }

    /**
     * Time of one cycle (percentiles), one thread.
     * @param client the implementation
     * @param ownKey this thread's key
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @Threads(1)
    public void latency1(Client client, OwnKey ownKey) {
        client.adapter.runLocked(ownKey.key, EMPTY_CRITICAL_SECTION);
    }

    /**
     * Time of one cycle (percentiles), eight threads.
     * @param client the implementation
     * @param ownKey this thread's key
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @Threads(8)
    public void latency8(Client client, OwnKey ownKey) {
        client.adapter.runLocked(ownKey.key, EMPTY_CRITICAL_SECTION);
    }

}
