package io.github.distlock.observation;

import org.jspecify.annotations.Nullable;

import io.github.distlock.core.LockContext;
import io.github.distlock.core.LockListener.AcquireOutcome;
import io.github.distlock.core.LockListener.ReleaseOutcome;
import io.micrometer.observation.Observation;

/**
 * What a {@link LockAcquireObservationConvention} or
 * {@link LockHoldObservationConvention} reads to name and tag an observation: the lock as
 * the listener seam sees it, and, once known, how the observed phase ended.
 */
public abstract sealed class LockObservationContext extends Observation.Context
        permits LockObservationContext.Acquire, LockObservationContext.Hold {

    private final LockContext lock;

    LockObservationContext(LockContext lock) {
        this.lock = lock;
    }

    /**
     * The lock: its {@link LockContext#name() name}, {@link LockContext#key() key}, wait
     * and hold state.
     */
    public LockContext lock() {
        return lock;
    }

    /** The acquisition of a lock. */
    public static final class Acquire extends LockObservationContext {

        private volatile @Nullable AcquireOutcome outcome;

        Acquire(LockContext lock) {
            super(lock);
        }

        /** How the acquisition ended, or {@code null} while it runs. */
        public @Nullable AcquireOutcome outcome() {
            return outcome;
        }

        void outcome(AcquireOutcome outcome) {
            this.outcome = outcome;
        }

    }

    /** The hold of a lock, from acquisition to release or loss. */
    public static final class Hold extends LockObservationContext {

        private volatile @Nullable HoldOutcome outcome;

        Hold(LockContext lock) {
            super(lock);
        }

        /** How the hold ended, or {@code null} while the lock is held. */
        public @Nullable HoldOutcome outcome() {
            return outcome;
        }

        void outcome(HoldOutcome outcome) {
            this.outcome = outcome;
        }

    }

    /**
     * How a hold ended: one of the release outcomes, or the lease was lost before
     * release.
     */
    public enum HoldOutcome {

        /** Released while still ours. */
        RELEASED(ReleaseOutcome.RELEASED.tagValue()),
        /** At release the key had already expired or been taken. */
        ALREADY_GONE(ReleaseOutcome.ALREADY_GONE.tagValue()),
        /**
         * The release could not reach Redis; it is retried in the background until the
         * lease ends.
         */
        FAILED(ReleaseOutcome.FAILED.tagValue()),
        /** The watchdog found the lease lost while the lock was held. */
        LOST("lost");

        private final String tagValue;

        HoldOutcome(String tagValue) {
            this.tagValue = tagValue;
        }

        /** The value of the {@code outcome} tag. */
        public String tagValue() {
            return tagValue;
        }

        static HoldOutcome of(ReleaseOutcome release) {
            return switch (release) {
                case RELEASED -> RELEASED;
                case ALREADY_GONE -> ALREADY_GONE;
                case FAILED -> FAILED;
            };
        }

    }

}
