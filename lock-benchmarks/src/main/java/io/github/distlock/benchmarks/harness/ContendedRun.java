package io.github.distlock.benchmarks.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.HdrHistogram.Histogram;

import io.github.distlock.benchmarks.adapter.LockAdapter;
import io.github.distlock.benchmarks.adapter.LockNotAcquiredException;

/**
 * The timed loop of the contended scenarios: N threads take turns on ONE key for a
 * warm-up and then a measurement window. Each acquisition increments the shared counter
 * non-atomically and records who held the lock before; inside the window it also records
 * its wait (call to entry of the critical section) in an HdrHistogram, whether the owner
 * changed, and the thread's count.
 *
 * <p>
 * Why not JMH: JMH measures calls, but owner switches, fairness and safety are properties
 * of the sequence of acquisitions across threads, which only the critical section itself
 * can observe.
 *
 * <p>
 * Acquisitions that enter after the window closes (threads finish the attempt they are
 * in) are counted for the safety check but not for the rates.
 */
public final class ContendedRun {

    /**
     * Longest wait the histograms track; longer waits are clamped (the wait limit is 10
     * s).
     */
    static final long MAX_TRACKED_NANOS = Duration.ofSeconds(60).toNanos();

    private ContendedRun() {
    }

    /**
     * Runs the loop.
     * @param adapters one adapter per thread (the same instance repeated for a shared
     * client)
     * @param key the one contended key
     * @param resource the counter and last owner, shared by all threads (and processes)
     * @param ownerBase added to the thread index to make owner ids unique across
     * processes
     * @param warmup how long to run before measuring
     * @param measure how long to measure
     * @param waitTime the adapters' wait limit: a thread still running this long after
     * the window closed (plus a margin) is stuck, which is reported as an error with its
     * stack
     * @return what every thread observed
     * @throws InterruptedException if interrupted while waiting for the threads
     */
    public static Outcome run(List<LockAdapter> adapters, String key, SharedResource resource, long ownerBase,
            Duration warmup, Duration measure, Duration waitTime) throws InterruptedException {
        int threads = adapters.size();
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        List<Worker> workers = new ArrayList<>(threads);
        List<Thread> started = new ArrayList<>(threads);
        for (int i = 0; i < threads; i++) {
            Worker worker = new Worker(adapters.get(i), key, resource, ownerBase + i, ready, go);
            workers.add(worker);
            Thread thread = new Thread(worker, "contender-" + i);
            thread.setDaemon(true);
            started.add(thread);
            thread.start();
        }
        ready.await();
        long windowStart = System.nanoTime() + warmup.toNanos();
        long windowEnd = windowStart + measure.toNanos();
        for (Worker worker : workers) {
            worker.window(windowStart, windowEnd);
        }
        go.countDown();
        long deadline = windowEnd + waitTime.plusSeconds(30).toNanos();
        List<String> stuck = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread thread = started.get(i);
            thread.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            if (thread.isAlive()) {
                // A lock call that outlives its own wait limit is a bug worth a stack
                // trace, not a hung build.
                stuck.add("thread " + i + " still inside the lock call " + waitTime.plusSeconds(30)
                        + " after the window closed: " + Adapters.stack(thread));
                thread.interrupt();
            }
        }
        Outcome outcome = new Outcome(workers, measure);
        outcome.errors.addAll(stuck);
        return outcome;
    }

    /** The merged observations of one run; read after all threads ended. */
    public static final class Outcome {

        /** Acquisitions inside the window, per thread. */
        public final long[] perThread;

        /** Owner changes inside the window. */
        public final long ownerSwitches;

        /**
         * Acquisitions over the whole run, warm-up and stragglers included, for the
         * safety check.
         */
        public final long totalAcquisitions;

        /** Attempts that ran out of wait time. */
        public final long timeouts;

        /** Anything an adapter threw besides a timeout; a thread stops at its first. */
        public final List<String> errors;

        /** Waits inside the window, in nanoseconds. */
        public final Histogram waits;

        /** The window length. */
        public final Duration measured;

        Outcome(List<Worker> workers, Duration measured) {
            this.measured = measured;
            perThread = new long[workers.size()];
            waits = newHistogram();
            errors = new ArrayList<>();
            long switches = 0;
            long total = 0;
            long timedOut = 0;
            for (int i = 0; i < workers.size(); i++) {
                Worker worker = workers.get(i);
                perThread[i] = worker.inWindow;
                switches += worker.switches;
                total += worker.total;
                timedOut += worker.timeouts;
                waits.add(worker.waits);
                if (worker.error != null) {
                    errors.add("thread " + i + ": " + worker.error);
                }
            }
            ownerSwitches = switches;
            totalAcquisitions = total;
            timeouts = timedOut;
        }

    }

    static Histogram newHistogram() {
        return new Histogram(MAX_TRACKED_NANOS, 3);
    }

    /** One contending thread. Its counters are confined to it until join. */
    private static final class Worker implements Runnable {

        private final LockAdapter adapter;

        private final String key;

        private final SharedResource resource;

        private final long owner;

        private final CountDownLatch ready;

        private final CountDownLatch go;

        private final Histogram waits = newHistogram();

        private final Runnable criticalSection = this::criticalSection;

        private long windowStart;

        private long windowEnd;

        private long attemptStart;

        private long inWindow;

        private long switches;

        private long total;

        private long timeouts;

        private String error;

        Worker(LockAdapter adapter, String key, SharedResource resource, long owner, CountDownLatch ready,
                CountDownLatch go) {
            this.adapter = adapter;
            this.key = key;
            this.resource = resource;
            this.owner = owner;
            this.ready = ready;
            this.go = go;
        }

        void window(long start, long end) {
            windowStart = start;
            windowEnd = end;
        }

        @Override
        public void run() {
            ready.countDown();
            try {
                go.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
            while (System.nanoTime() - windowEnd < 0) {
                attemptStart = System.nanoTime();
                try {
                    adapter.runLocked(key, criticalSection);
                }
                catch (LockNotAcquiredException ex) {
                    timeouts++;
                }
                catch (RuntimeException ex) {
                    error = ex.toString();
                    return;
                }
            }
        }

        /** Runs under the lock: the non-atomic increment plus the bookkeeping. */
        private void criticalSection() {
            long entered = System.nanoTime();
            long value = resource.counter();
            resource.counter(value + 1);
            long previousOwner = resource.lastOwner();
            resource.lastOwner(owner);
            total++;
            if (entered - windowStart >= 0 && entered - windowEnd < 0) {
                inWindow++;
                if (previousOwner != owner) {
                    switches++;
                }
                waits.recordValue(Math.min(entered - attemptStart, MAX_TRACKED_NANOS));
            }
        }

    }

}
