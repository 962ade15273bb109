package io.github.distlock.benchmarks.harness;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;

import io.github.distlock.benchmarks.adapter.FirstUse;
import io.github.distlock.benchmarks.adapter.LockAdapter;

/**
 * Preparing and closing adapters so that neither skews nor hangs a measurement.
 */
final class Adapters {

    /** How long closing one client may take before the harness reports it as hung. */
    static final Duration CLOSE_LIMIT = Duration.ofSeconds(30);

    private Adapters() {
    }

    /**
     * Runs one uncontended cycle on a private key, so that lazily opened connections,
     * script loading and subscriptions happen before the clock starts, for every
     * implementation alike.
     * @param adapter a freshly opened adapter
     */
    static void prime(LockAdapter adapter) {
        FirstUse.cycle(adapter, "bench:prime:" + UUID.randomUUID());
    }

    /**
     * Closes the adapters one after the other, each within {@link #CLOSE_LIMIT}.
     * @param adapters what to close; duplicates (a shared client) are closed once
     * @throws IllegalStateException naming the stack of a close that hung or the
     * exception it threw
     */
    static void closeAll(List<LockAdapter> adapters) {
        IllegalStateException failure = null;
        for (LockAdapter adapter : adapters.stream().distinct().toList()) {
            try {
                closeWithin(adapter, CLOSE_LIMIT);
            }
            catch (IllegalStateException ex) {
                failure = failure == null ? ex : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static void closeWithin(LockAdapter adapter, Duration limit) {
        RuntimeException[] thrown = new RuntimeException[1];
        Thread closer = new Thread(() -> {
            try {
                adapter.close();
            }
            catch (RuntimeException ex) {
                thrown[0] = ex;
            }
        }, "adapter-close");
        // A hung close must not keep the JVM alive after the report.
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(limit.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        if (closer.isAlive()) {
            throw new IllegalStateException(
                    "closing the client did not finish within " + limit + "; it hangs at " + stack(closer));
        }
        if (thrown[0] != null) {
            throw new IllegalStateException("closing the client failed: " + thrown[0], thrown[0]);
        }
    }

    /**
     * @param thread a live thread
     * @return its top frames on one line
     */
    static String stack(Thread thread) {
        return Arrays.stream(thread.getStackTrace())
            .limit(25)
            .map(StackTraceElement::toString)
            .collect(Collectors.joining(" <- "));
    }

}
