package io.github.distlock.benchmarks.jmh;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import io.github.distlock.core.BenchLockContexts;
import io.github.distlock.core.LockContext;
import io.github.distlock.core.LockListener;
import io.github.distlock.core.LockListener.ReleaseOutcome;
import io.github.distlock.core.LockListeners;
import io.github.distlock.observation.MeterLockListener;
import io.github.distlock.observation.MeterTimingLockListener;
import io.github.distlock.observation.ObservationLockListener;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;

/**
 * The CPU cost of the Micrometer listeners alone, without Redis: one uncontended lock
 * cycle's callbacks ({@code acquiring}, {@code acquired}, {@code released}) on a fresh
 * {@link LockContext}, through {@link LockListeners} as the lock service calls them. Not
 * part of the suite: the Redis-bound figures of {@link UncontendedBenchmark} are noisy on
 * a shared machine, this one measures the instrumentation's own nanoseconds and, with
 * {@code -prof gc}, its allocations per cycle.
 *
 * <pre>{@code
 * java -cp "target/classes:$(cat cp.txt)" org.openjdk.jmh.Main ListenerCostBenchmark -prof gc -t 1
 * }</pre>
 */
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ListenerCostBenchmark {

    /**
     * The listeners of one application, shared by all threads like the lock service's.
     */
    @State(Scope.Benchmark)
    public static class Listeners {

        /**
         * {@code NONE}: no Micrometer (the lost-lease WARN only); {@code OBSERVATIONS}:
         * observations on a registry whose only handler is
         * {@link DefaultMeterObservationHandler}, plus the counters; {@code METERS}: the
         * meters recorded directly, as the auto-configuration does when meter handlers
         * are all there is; {@code METERS_NO_LONG_TASK_TIMERS}: the same without the
         * {@code .active} long-task timers
         * ({@code management.observations.long-task-timer.enabled=false}).
         */
        @Param({ "NONE", "OBSERVATIONS", "METERS", "METERS_NO_LONG_TASK_TIMERS" })
        public String listeners;

        LockListeners all;

        @Setup
        public void setUp() {
            List<LockListener> chosen = new ArrayList<>();
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            switch (listeners) {
                case "NONE" -> {
                }
                case "OBSERVATIONS" -> {
                    ObservationRegistry observations = ObservationRegistry.create();
                    observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
                    chosen.add(new ObservationLockListener(observations, null, null));
                    chosen.add(new MeterLockListener(meters));
                }
                case "METERS" -> {
                    chosen.add(new MeterTimingLockListener(meters, null, true));
                    chosen.add(new MeterLockListener(meters));
                }
                case "METERS_NO_LONG_TASK_TIMERS" -> {
                    chosen.add(new MeterTimingLockListener(meters, null, false));
                    chosen.add(new MeterLockListener(meters));
                }
                default -> throw new IllegalArgumentException(listeners);
            }
            all = LockListeners.of(chosen);
        }

    }

    /**
     * One lock cycle's callbacks; the context is returned so that the JIT cannot drop it.
     */
    @Benchmark
    public LockContext cycle(Listeners listeners) {
        LockContext lock = BenchLockContexts.newContext("orders", "order:1");
        listeners.all.acquiring(lock);
        listeners.all.acquired(lock);
        listeners.all.released(lock, ReleaseOutcome.RELEASED);
        return lock;
    }

}
