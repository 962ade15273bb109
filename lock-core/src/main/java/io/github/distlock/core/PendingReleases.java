package io.github.distlock.core;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.github.distlock.LockBackendException;

/**
 * Releases and undos that Redis did not confirm, retried in the background until it does
 * or until whatever they would remove has expired on its own.
 *
 * <p>
 * Why: an acquire whose reply never came may have taken the lock, and a release that
 * timed out may not have run. Either way a key may hold a token that no handle owns, and
 * without a retry it would block every other instance for a whole lease. Both operations
 * are idempotent for their token, so retrying is always safe.
 */
final class PendingReleases implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(PendingReleases.class);

    private static final long FIRST_RETRY_MILLIS = 50;

    private static final long MAX_RETRY_MILLIS = 1_000;

    private final LockBackend backend;

    private final ScheduledThreadPoolExecutor scheduler;

    PendingReleases(LockBackend backend) {
        this.backend = backend;
        this.scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "distributed-lock-release-retry");
            thread.setDaemon(true);
            return thread;
        });
        this.scheduler.setRemoveOnCancelPolicy(true);
    }

    /**
     * Undoes an acquisition that must not stand: its outcome is unknown (the backend
     * failed), or it succeeded but the caller will not use it (interrupted, or the lease
     * already over). Leaves the wait queue, then releases.
     * @param tryNow whether to try once on the calling thread first (when Redis is likely
     * healthy); otherwise every try runs in the background, so the caller is not held up
     * by a Redis that just failed it
     * @return whether the undo is confirmed already
     */
    boolean undo(LockKey key, String token, boolean queued, long ttlMillis, boolean tryNow) {
        Retry retry = new Retry(key, token, queued, ttlMillis, System.nanoTime() + deadlineNanos(ttlMillis));
        if (tryNow && retry.attempt()) {
            return true;
        }
        retry.schedule(tryNow ? FIRST_RETRY_MILLIS : 0);
        return false;
    }

    /**
     * Retries the release of a handle whose release call failed, until Redis answers or
     * the lease that the key was last given has run out.
     */
    void releaseLater(LockKey key, String token, long ttlMillis, long leaseDeadlineNanos) {
        releaseLater(key, token, ttlMillis, leaseDeadlineNanos, false, 0);
    }

    /**
     * As {@link #releaseLater(LockKey, String, long, long)}, for a lock held at least
     * until {@code minHoldEndNanos} (if {@code minHold}): a retry before then only
     * shortens the lease to what is left of the minimum hold, as the release would have.
     */
    void releaseLater(LockKey key, String token, long ttlMillis, long leaseDeadlineNanos, boolean minHold,
            long minHoldEndNanos) {
        long giveUpAt = Math.max(leaseDeadlineNanos, System.nanoTime())
                + TimeUnit.MILLISECONDS.toNanos(MAX_RETRY_MILLIS);
        Retry retry = new Retry(key, token, false, ttlMillis, giveUpAt);
        retry.minHold = minHold;
        retry.minHoldEndNanos = minHoldEndNanos;
        retry.schedule(FIRST_RETRY_MILLIS);
    }

    /**
     * A lock set at any moment of the attempt lasts at most its ttl; retry a little
     * beyond that.
     */
    private static long deadlineNanos(long ttlMillis) {
        return TimeUnit.MILLISECONDS.toNanos(ttlMillis + MAX_RETRY_MILLIS);
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }

    private final class Retry implements Runnable {

        private final LockKey key;

        private final String token;

        private final boolean queued;

        private final long ttlMillis;

        private final long giveUpAtNanos;

        private long delayMillis = FIRST_RETRY_MILLIS;

        /** Whether a retry before {@link #minHoldEndNanos} only shortens the lease. */
        boolean minHold;

        long minHoldEndNanos;

        Retry(LockKey key, String token, boolean queued, long ttlMillis, long giveUpAtNanos) {
            this.key = key;
            this.token = token;
            this.queued = queued;
            this.ttlMillis = ttlMillis;
            this.giveUpAtNanos = giveUpAtNanos;
        }

        /** One try: {@code true} once Redis has answered both calls. */
        boolean attempt() {
            try {
                if (queued && backend instanceof QueueingLockBackend queueing) {
                    // Leave the queue first, so the release cannot hand the lock to us
                    // again.
                    queueing.stopWaiting(key, token, ttlMillis);
                }
                long holdLeft = minHold ? minHoldEndNanos - System.nanoTime() : 0;
                if (holdLeft > 0 && backend instanceof LeaseAdjustingLockBackend adjusting) {
                    adjusting.releaseAfter(key, token, TimeUnit.NANOSECONDS.toMillis(holdLeft + 999_999));
                }
                else {
                    backend.release(key, token);
                }
                return true;
            }
            catch (LockBackendException ex) {
                return false;
            }
        }

        void schedule(long delay) {
            if (scheduler.isShutdown()) {
                return;
            }
            try {
                scheduler.schedule(this, delay, TimeUnit.MILLISECONDS);
            }
            catch (RejectedExecutionException ex) {
                // Shutting down: the lease expires on its own.
            }
        }

        @Override
        public void run() {
            if (attempt()) {
                return;
            }
            if (System.nanoTime() - giveUpAtNanos >= 0) {
                logger.warn("Gave up releasing lock " + key.printableName() + " (" + key.printableStoreKey()
                        + "): Redis did not answer; any lease of ours there has run out by now.");
                return;
            }
            long delay = delayMillis;
            delayMillis = Math.min(MAX_RETRY_MILLIS, delayMillis * 2);
            schedule(delay);
        }

    }

}
