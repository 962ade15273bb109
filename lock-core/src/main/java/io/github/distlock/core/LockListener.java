package io.github.distlock.core;

import org.jspecify.annotations.Nullable;

/**
 * Told of everything that happens to a lock in this JVM: the one seam that metrics,
 * traces, the Actuator view, the {@code LockLostEvent} (lock-spring), the lost-lease WARN
 * and {@link io.github.distlock.LockHandle#onLost} listeners are built on.
 *
 * <p>
 * Every method has an empty default, so a listener overrides only what it needs. Calls
 * arrive on the thread where the thing happened: the caller's for acquisitions and
 * releases, the watchdog's for renewals, and a separate listener thread for lost leases.
 * A listener must therefore be quick and thread-safe; whatever it throws is logged and
 * ignored, and never changes the outcome for the caller. The {@link LockContext} is the
 * same object from {@link #acquiring} to {@link #released} or {@link #leaseLost}, so a
 * listener can keep per-lock state on it ({@link LockContext#put}).
 *
 * <pre>{@code
 * &#64;Bean
 * LockListener slowAcquisitions() {
 *     return new LockListener() {
 *         &#64;Override
 *         public void acquired(LockContext lock) {
 *             if (lock.waitTime().toMillis() > 500) {
 *                 log.info("{} waited {} for {}", lock.threadName(), lock.waitTime(), lock.name());
 *             }
 *         }
 *     };
 * }
 * }</pre>
 *
 * Every {@code LockListener} bean is called, in {@code @Order}.
 */
public interface LockListener {

    /**
     * A caller starts acquiring {@code lock}: its request was valid, nothing has been
     * sent yet.
     */
    default void acquiring(LockContext lock) {
    }

    /**
     * The first attempt found the lock held, and the caller waits (it has wait time
     * left).
     */
    default void waiting(LockContext lock) {
    }

    /**
     * The caller holds the lock now: {@link LockContext#handle()} is set, and
     * {@link LockContext#waited()} and {@link LockContext#handedOver()} say how it got
     * it.
     */
    default void acquired(LockContext lock) {
    }

    /**
     * The call ended without the lock.
     * @param outcome why: never {@link AcquireOutcome#ACQUIRED}
     * @param cause the exception the caller gets (the store's failure, also when the
     * caller skips it), or {@code null} for a timeout or busy skip, which returns empty
     * (or throws {@link io.github.distlock.LockTimeoutException} from {@code lock})
     */
    default void notAcquired(LockContext lock, AcquireOutcome outcome, @Nullable Throwable cause) {
    }

    /**
     * A watchdog renewal of a held lease answered.
     * @param renewed {@code true} if the lease was extended; {@code false} if the renewal
     * failed and will be retried while the lease lasts (a lease found taken or gone is
     * reported by {@link #leaseLost} instead)
     */
    default void renewed(LockContext lock, boolean renewed) {
    }

    /**
     * The lease was lost while held: the guarded work may now run somewhere else too.
     * Runs on the watchdog's listener thread, after the handle already reports
     * {@code isHeld() == false}.
     * @param reason why, as a category
     * @param description why, in words, for logs
     */
    default void leaseLost(LockContext lock, LeaseLossReason reason, String description) {
    }

    /**
     * The holder released the lock (the first {@code release()} of its handle).
     * @param outcome whether the key was still ours, already gone, or Redis could not be
     * reached (then the release is retried in the background)
     */
    default void released(LockContext lock, ReleaseOutcome outcome) {
    }

    /** How an acquisition ended. */
    enum AcquireOutcome {

        /** The caller holds the lock. */
        ACQUIRED("acquired", null),
        /**
         * Another owner held it until the wait ran out (or its lease ran out before it
         * could be returned).
         */
        TIMEOUT("timeout", null),
        /**
         * Redis failed or could not be reached; nothing of the attempt is left in Redis.
         */
        BACKEND_ERROR("backend-error", null),
        /** The caller was interrupted; nothing of the attempt is left in Redis. */
        INTERRUPTED("interrupted", null),
        /**
         * As {@link #TIMEOUT}, but the caller skips its work rather than fail
         * ({@link io.github.distlock.LockRequest.SkipOn#whenBusy()},
         * {@code onBusy = SKIP}).
         */
        SKIPPED_BUSY("skipped", "busy"),
        /**
         * As {@link #BACKEND_ERROR}, but the caller skips its work rather than fail
         * ({@link io.github.distlock.LockRequest.SkipOn#whenUnavailable()},
         * {@code onUnavailable = SKIP}).
         */
        SKIPPED_UNAVAILABLE("skipped", "unavailable");

        /** The {@code reason} tag of the outcomes that are not skips. */
        private static final String NO_REASON = "none";

        private final String tagValue;

        private final String reasonTagValue;

        AcquireOutcome(String tagValue, @Nullable String reasonTagValue) {
            this.tagValue = tagValue;
            this.reasonTagValue = (reasonTagValue != null ? reasonTagValue : NO_REASON);
        }

        /**
         * The value of the {@code outcome} tag in metrics: the two skips share
         * {@code skipped}.
         */
        public String tagValue() {
            return tagValue;
        }

        /**
         * The value of the {@code reason} tag in metrics: why a skipped call skipped
         * ({@code busy}, {@code unavailable}), {@code none} for every other outcome.
         */
        public String reasonTagValue() {
            return reasonTagValue;
        }

        /**
         * Whether the caller skips its work: a busy or unavailable lock that the caller
         * chose to skip over.
         */
        public boolean skipped() {
            return this == SKIPPED_BUSY || this == SKIPPED_UNAVAILABLE;
        }

    }

    /** Why a held lease was lost. */
    enum LeaseLossReason {

        /** A renewal found the key gone or holding another owner's token. */
        EXPIRED_OR_TAKEN("expired-or-taken"),
        /**
         * No renewal succeeded before the lease ran out: Redis could not be reached, or
         * too few replicas (or Redlock nodes) confirmed it.
         */
        RENEWAL_FAILED("renewal-failed"),
        /**
         * A fixed lease (watchdog off) ran out before its holder released it; reported
         * only for requests that ask for it
         * ({@link io.github.distlock.LockRequest#withExpiryReported}).
         */
        EXPIRED("expired");

        private final String tagValue;

        LeaseLossReason(String tagValue) {
            this.tagValue = tagValue;
        }

        /** The value of the {@code reason} tag in metrics. */
        public String tagValue() {
            return tagValue;
        }

    }

    /** How a release ended. */
    enum ReleaseOutcome {

        /** The key held our token and was deleted (or handed to the next waiter). */
        RELEASED("released"),
        /**
         * The key had already expired or been taken: another owner may have run
         * concurrently.
         */
        ALREADY_GONE("already-gone"),
        /**
         * Redis could not be reached; the release is retried in the background until the
         * lease ends.
         */
        FAILED("failed");

        private final String tagValue;

        ReleaseOutcome(String tagValue) {
            this.tagValue = tagValue;
        }

        /** The value of the {@code outcome} tag in metrics. */
        public String tagValue() {
            return tagValue;
        }

    }

}
