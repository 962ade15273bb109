package io.github.distlock.aspectj;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The body of a guarded method in these tests: the first caller to pass stays inside
 * until the test opens the gate, later callers pass straight through. It counts how many
 * callers were ever inside at once, which is what a lock must keep at one.
 */
public final class Gate {

    private final AtomicBoolean first = new AtomicBoolean(true);

    private final CompletableFuture<Void> firstInside = new CompletableFuture<>();

    private final CountDownLatch open = new CountDownLatch(1);

    private final AtomicInteger inside = new AtomicInteger();

    private final AtomicInteger mostInside = new AtomicInteger();

    private final AtomicInteger entries = new AtomicInteger();

    /** Runs as a guarded method's body. */
    public void pass() {
        entries.incrementAndGet();
        mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
        try {
            if (first.compareAndSet(true, false)) {
                firstInside.complete(null);
                if (!open.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("The test never opened the gate");
                }
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
        finally {
            inside.decrementAndGet();
        }
    }

    /**
     * Completes once the first caller is inside the body, holding whatever lock guards
     * it.
     */
    public CompletableFuture<Void> firstInside() {
        return firstInside;
    }

    public void open() {
        open.countDown();
    }

    /** The most callers that were inside the body at the same time. */
    public int mostInside() {
        return mostInside.get();
    }

    /** How many calls ran the body. */
    public int entries() {
        return entries.get();
    }

}
