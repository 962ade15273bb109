package io.github.distlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Acquires several locks for {@link LockService#lockAll(List)}: all or none, in sorted
 * key order, within one wait. Built only on {@link LockService#tryLock(LockRequest)}, so
 * every implementation gets it.
 *
 * <p>
 * Sorted order is what keeps two callers that lock the same keys from deadlocking:
 * whoever lists them as {@code (b, a)} still takes {@code a} first, so neither can hold
 * one key while waiting for the other's.
 */
final class MultiKeyAcquisition {

    private MultiKeyAcquisition() {
    }

    /**
     * @param throwOnTimeout whether a lock still held by another owner at the deadline
     * throws {@link LockTimeoutException} naming it, or returns {@code null}
     * @return every lock, or {@code null} on timeout when not throwing; nothing is left
     * held then
     */
    static @Nullable MultiLockHandle acquire(LockService service, Collection<LockRequest> requests,
            boolean throwOnTimeout) {
        List<LockRequest> sorted = distinctSorted(requests, service.maxKeyLength());
        Duration wait = sharedWait(service, sorted);
        // A wait is at most 36500 days (LockDurations), so the deadline cannot overflow.
        long deadline = System.nanoTime() + wait.toNanos();
        List<LockHandle> taken = new ArrayList<>(sorted.size());
        LockRequest missed = null;
        try {
            for (LockRequest request : sorted) {
                // Later keys get what is left of the wait, so several keys together wait
                // no longer than one would.
                Duration left = (taken.isEmpty() ? wait : Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
                LockHandle handle = service.tryLock(request.withWaitTime(left)).orElse(null);
                if (handle == null) {
                    missed = request;
                    break;
                }
                taken.add(handle);
            }
        }
        catch (RuntimeException | Error ex) {
            // A failed key, an interrupt or a bad request: what was taken so far must not
            // stay behind.
            releaseTaken(taken, ex);
            throw ex;
        }
        if (missed != null) {
            LockTimeoutException timeout = new LockTimeoutException(missed.key(), wait);
            releaseTaken(taken, timeout);
            if (throwOnTimeout) {
                throw timeout;
            }
            if (timeout.getSuppressed().length > 0 && timeout.getSuppressed()[0] instanceof RuntimeException failed) {
                // Redis failed the undo: say so, as tryLock would, rather than report a
                // plain "held elsewhere".
                throw failed;
            }
            return null;
        }
        return new MultiLockHandle(taken);
    }

    /**
     * Releases in reverse order; a release failure rides along on the exception that ends
     * the acquisition.
     */
    private static void releaseTaken(List<LockHandle> taken, Throwable failure) {
        try {
            MultiLockHandle.releaseAll(taken, taken.size());
        }
        catch (RuntimeException ex) {
            failure.addSuppressed(ex);
        }
    }

    /**
     * The requests by key, each key once. The same key asked twice with different options
     * (ttl, watchdog, ...) is a contradiction and fails before anything is taken.
     */
    static List<LockRequest> distinctSorted(Collection<LockRequest> requests, int maxKeyLength) {
        Objects.requireNonNull(requests, "requests");
        if (requests.isEmpty()) {
            throw new IllegalArgumentException("No lock to acquire: pass at least one key.");
        }
        List<LockRequest> sorted = new ArrayList<>(requests.size());
        for (LockRequest request : requests) {
            Objects.requireNonNull(request, "request");
            // Every key is checked before the first is taken: a bad one must not cost the
            // others a round trip.
            LockKeys.requireValid(request.key(), maxKeyLength,
                    "The lock key of one of " + requests.size() + " requests");
            sorted.add(request);
        }
        sorted.sort(Comparator.comparing(LockRequest::key));
        int distinct = 0;
        for (LockRequest request : sorted) {
            LockRequest previous = (distinct == 0 ? null : sorted.get(distinct - 1));
            if (previous != null && previous.key().equals(request.key())) {
                if (!sameOptions(previous, request)) {
                    throw new IllegalArgumentException("Lock " + LockKeys.printable(request.key()) + " is requested "
                            + "twice with different options (" + previous + " and " + request + "). Request each "
                            + "key once, or with the same options.");
                }
                continue;
            }
            sorted.set(distinct++, request);
        }
        return List.copyOf(sorted.subList(0, distinct));
    }

    /** Equal apart from the wait, which is shared by all keys anyway. */
    private static boolean sameOptions(LockRequest one, LockRequest other) {
        return one.withWaitTime(null).equals(other.withWaitTime(null));
    }

    /**
     * The longest wait any request asks for; a request without one asks for the service's
     * default.
     */
    private static Duration sharedWait(LockService service, List<LockRequest> requests) {
        Duration longest = null;
        for (LockRequest request : requests) {
            Duration wait = (request.waitTime() != null ? request.waitTime() : service.defaultWaitTime());
            if (longest == null || (wait != null && wait.compareTo(longest) > 0)) {
                longest = wait;
            }
        }
        return (longest != null ? longest : Duration.ZERO);
    }

}
