package io.github.distlock.benchmarks.adapter;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * The first use of a freshly opened client, before any clock starts: it opens the
 * connections, loads the scripts and warms the classes that every later call reuses.
 *
 * <p>
 * It is tried again for up to {@link #PATIENCE}. In a cold JVM on a loaded machine (2
 * cores, load above 10 while other builds ran), the first Lettuce connect of ours took
 * longer than the 2 s {@code distributed-lock.operation-timeout}, twice in a row in one
 * worker JVM, and the whole smoke or a JMH fork failed on setup, on this branch and on
 * main alike. The connect goes on in the background, so a later attempt finds it open.
 * Only this setup call is retried: a failure in a measured cycle still fails the run.
 */
public final class FirstUse {

    /** How long attempts go on before the last failure is thrown. */
    static final Duration PATIENCE = Duration.ofSeconds(30);

    private static final Duration PAUSE = Duration.ofMillis(200);

    private FirstUse() {
    }

    /**
     * Runs one uncontended cycle, retrying as described above.
     * @param adapter a freshly opened client
     * @param key a key nothing else uses; attempt n uses {@code key:n}
     */
    public static void cycle(LockAdapter adapter, String key) {
        run("the first cycle on " + key, attempt -> adapter.runLocked(key + ":" + attempt, () -> {
        }));
    }

    /**
     * Runs {@code firstUse}, retrying as described above.
     * @param what what it is, for the log line of a failed attempt
     * @param firstUse the client's first call, given the attempt number from 1: a failed
     * attempt may still have taken its lock (its undo may be pending), so each attempt
     * should use a key of its own
     */
    public static void run(String what, IntConsumer firstUse) {
        long giveUpAt = System.nanoTime() + PATIENCE.toNanos();
        for (int attempt = 1;; attempt++) {
            try {
                firstUse.accept(attempt);
                return;
            }
            catch (RuntimeException ex) {
                if (System.nanoTime() - giveUpAt > 0) {
                    throw ex;
                }
                // Visible in the run's output, so that a slow setup is not mistaken for a
                // quiet one.
                System.out.println("setup: " + what + " failed (attempt " + attempt + "), trying again: " + ex);
                // A connect that failed fast fails fast again for a moment: no busy loop.
                LockSupport.parkNanos(PAUSE.toNanos());
            }
        }
    }

}
