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

import io.github.distlock.benchmarks.adapter.ConsensusImplementation;
import io.github.distlock.benchmarks.adapter.ConsensusTarget;
import io.github.distlock.benchmarks.adapter.FirstUse;
import io.github.distlock.benchmarks.adapter.LockAdapter;
import io.github.distlock.benchmarks.adapter.RedisTarget;

/**
 * The consensus part's uncontended cycle (acquire, empty critical section, release), each
 * thread on its own key, at 1 and 8 threads sharing one client, as
 * {@link UncontendedBenchmark} does for Redis. Unlike there, the servers are not started
 * per trial: every implementation runs against the same 3-member etcd cluster, 3-member
 * ZooKeeper ensemble and redis-server, which the process driving the run started and
 * named in system properties ({@link ConsensusTarget#fromSystemProperties}); each trial
 * uses keys of its own.
 */
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class ConsensusBenchmark {

    private static final Runnable EMPTY_CRITICAL_SECTION = () -> {
    };

    /** One client of the implementation under test, shared by all threads. */
    @State(Scope.Benchmark)
    public static class Client {

        /** The implementation, by {@link ConsensusImplementation} constant name. */
        @Param({ "OURS_ETCD", "JETCD_LOCK", "JETCD_LOCK_LEASE_PER_LOCK", "OURS_ZOOKEEPER", "CURATOR_MUTEX",
                "SI_ZOOKEEPER", "OURS_REDIS" })
        public String implementation;

        LockAdapter adapter;

        /** Opens the client and runs its first cycle. */
        @Setup(Level.Trial)
        public void start() {
            adapter = ConsensusImplementation.valueOf(implementation)
                .open(ConsensusTarget.fromSystemProperties(RedisTarget.DEFAULT_WAIT));
            // Connections, sessions and leases belong to setup, not to the first
            // iteration.
            FirstUse.cycle(adapter, "bench:prime:" + implementation + ":" + System.nanoTime());
        }

        /** Closes the client; the servers outlive it. */
        @TearDown(Level.Trial)
        public void stop() {
            if (adapter != null) {
                adapter.close();
            }
        }

    }

    /** The calling thread's own key, fresh per trial, so that nothing contends. */
    @State(Scope.Thread)
    public static class OwnKey {

        private static final AtomicLong SEQUENCE = new AtomicLong();

        String key;

        /** Picks a key no other thread or trial uses. */
        @Setup(Level.Trial)
        public void pick() {
            key = "bench:uncontended:" + ProcessHandle.current().pid() + ":" + SEQUENCE.incrementAndGet();
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

}
