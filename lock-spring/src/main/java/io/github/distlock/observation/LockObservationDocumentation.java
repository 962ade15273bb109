package io.github.distlock.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observations of a lock: its acquisition and its hold, with their tag names. The
 * meters they produce (with Micrometer's {@code DefaultMeterObservationHandler}, which
 * Spring Boot's Actuator installs) are listed, with PromQL, in {@code docs/metrics.md}.
 *
 * <pre>{@code
 * // Prometheus, from the acquire observation's timer:
 * sum by (lock_name) (rate(distributed_lock_acquire_seconds_count{outcome="timeout"}[5m]))
 * // calls skipped because Redis was down:
 * sum by (lock_name) (rate(distributed_lock_acquire_seconds_count{outcome="skipped", reason="unavailable"}[5m]))
 * }</pre>
 */
public enum LockObservationDocumentation implements ObservationDocumentation {

    /**
     * From the start of an acquisition to its end, with or without the lock: the wait
     * time. {@code distributed.lock.acquire} (timer) and
     * {@code distributed.lock.acquire.active} (long-task timer: callers acquiring right
     * now).
     */
    LOCK_ACQUIRE {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return DefaultLockAcquireObservationConvention.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return new KeyName[] { LowCardinalityKeyNames.LOCK_NAME, LowCardinalityKeyNames.BACKEND,
                    LowCardinalityKeyNames.OUTCOME, LowCardinalityKeyNames.REASON, LowCardinalityKeyNames.WAITED };
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return HighCardinalityKeyNames.values();
        }
    },

    /**
     * From acquisition to release, or to the loss of the lease: how long locks are held.
     * {@code distributed.lock.hold} (timer) and {@code distributed.lock.hold.active}
     * (long-task timer: locks held right now, and for how long).
     */
    LOCK_HOLD {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return DefaultLockHoldObservationConvention.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return new KeyName[] { LowCardinalityKeyNames.LOCK_NAME, LowCardinalityKeyNames.BACKEND,
                    LowCardinalityKeyNames.OUTCOME };
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return HighCardinalityKeyNames.values();
        }
    };

    /**
     * Tags on metrics and traces. Their values come from a small, fixed set (or the
     * lock's declared name).
     */
    public enum LowCardinalityKeyNames implements KeyName {

        /**
         * The lock's name: {@code @DistributedLock}'s declared name, else
         * {@code Class.method}; the name a {@code LockService} caller gave its request,
         * else {@code unnamed}. Never the per-call key.
         */
        LOCK_NAME {
            @Override
            public String asString() {
                return "lock.name";
            }
        },

        /**
         * The name of the backend that keeps the lock: {@code redis}, {@code redlock},
         * {@code etcd}, {@code zookeeper}, a {@code NamedLockBackend}'s name, or
         * {@code default} for a lock service built without one.
         */
        BACKEND {
            @Override
            public String asString() {
                return "backend";
            }
        },

        /**
         * How it ended. Acquire: {@code acquired}, {@code timeout},
         * {@code backend-error}, {@code interrupted}, or {@code skipped} when the caller
         * skips its work instead of failing ({@code onBusy} / {@code onUnavailable} =
         * {@code SKIP}), so that {@code timeout} counts only calls that failed with a
         * timeout. Hold: {@code released}, {@code already-gone}, {@code failed} (the
         * release could not reach Redis) or {@code lost}. Known only at the end, so
         * absent from the long-task timers.
         */
        OUTCOME {
            @Override
            public String asString() {
                return "outcome";
            }
        },

        /**
         * Acquire only: why a {@code skipped} call skipped, {@code busy} (another owner
         * held the lock for the whole wait time) or {@code unavailable} (the lock store
         * could not be reached or failed); {@code none} for the other outcomes.
         */
        REASON {
            @Override
            public String asString() {
                return "reason";
            }
        },

        /**
         * Acquire only: {@code true} if the first attempt found the lock held and the
         * caller waited.
         */
        WAITED {
            @Override
            public String asString() {
                return "waited";
            }
        }

    }

    /**
     * Tags on traces only: one value per call, which as a metric tag would make a time
     * series per key.
     */
    public enum HighCardinalityKeyNames implements KeyName {

        /** The key this call locked, for example {@code order:42}. */
        LOCK_KEY {
            @Override
            public String asString() {
                return "lock.key";
            }
        }

    }

}
