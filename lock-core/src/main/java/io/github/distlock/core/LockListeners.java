package io.github.distlock.core;

import java.util.List;
import java.util.OptionalLong;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Several {@link LockListener}s as one, each shielded from the others: what one throws is
 * logged and the rest are still told. The lost-lease WARN is always the first of them, so
 * that the log says what happened even in an application that registered no listener at
 * all.
 */
public final class LockListeners implements LockListener {

    private static final Logger logger = LoggerFactory.getLogger(LockListeners.class);

    private final LockListener[] listeners;

    private LockListeners(LockListener[] listeners) {
        this.listeners = listeners;
    }

    /**
     * The built-in WARN on a lost lease, followed by {@code listeners} in their order.
     *
     * <pre>{@code
     * new DefaultLockService(backend, watchdog, defaults, waiters, LockListeners.of(List.of(metrics, actuatorView)));
     * }</pre>
     */
    public static LockListeners of(List<? extends LockListener> listeners) {
        LockListener[] all = new LockListener[listeners.size() + 1];
        all[0] = LostLeaseWarning.INSTANCE;
        for (int i = 0; i < listeners.size(); i++) {
            all[i + 1] = listeners.get(i);
        }
        return new LockListeners(all);
    }

    /** Only the built-in WARN on a lost lease. */
    public static LockListeners none() {
        return of(List.of());
    }

    // Each event's loop is written out: one shared loop taking a lambda would allocate on
    // every
    // acquisition and release, on the hot path.

    @Override
    public void acquiring(LockContext lock) {
        for (LockListener listener : listeners) {
            try {
                listener.acquiring(lock);
            }
            catch (RuntimeException ex) {
                failed(listener, "acquiring", lock, ex);
            }
        }
    }

    @Override
    public void waiting(LockContext lock) {
        for (LockListener listener : listeners) {
            try {
                listener.waiting(lock);
            }
            catch (RuntimeException ex) {
                failed(listener, "waiting", lock, ex);
            }
        }
    }

    @Override
    public void acquired(LockContext lock) {
        for (LockListener listener : listeners) {
            try {
                listener.acquired(lock);
            }
            catch (RuntimeException ex) {
                failed(listener, "acquired", lock, ex);
            }
        }
    }

    @Override
    public void notAcquired(LockContext lock, AcquireOutcome outcome, @Nullable Throwable cause) {
        for (LockListener listener : listeners) {
            try {
                listener.notAcquired(lock, outcome, cause);
            }
            catch (RuntimeException ex) {
                failed(listener, "notAcquired", lock, ex);
            }
        }
    }

    @Override
    public void renewed(LockContext lock, boolean renewed) {
        for (LockListener listener : listeners) {
            try {
                listener.renewed(lock, renewed);
            }
            catch (RuntimeException ex) {
                failed(listener, "renewed", lock, ex);
            }
        }
    }

    @Override
    public void leaseLost(LockContext lock, LeaseLossReason reason, String description) {
        for (LockListener listener : listeners) {
            try {
                listener.leaseLost(lock, reason, description);
            }
            catch (RuntimeException ex) {
                failed(listener, "leaseLost", lock, ex);
            }
        }
    }

    @Override
    public void released(LockContext lock, ReleaseOutcome outcome) {
        for (LockListener listener : listeners) {
            try {
                listener.released(lock, outcome);
            }
            catch (RuntimeException ex) {
                failed(listener, "released", lock, ex);
            }
        }
    }

    private static void failed(LockListener listener, String event, LockContext lock, RuntimeException ex) {
        logger.warn("Lock listener " + listener.getClass().getName() + " failed on " + event + " of lock "
                + lock.lockKey().printableName() + "; the lock itself is unaffected", ex);
    }

    /** The WARN every lost lease gets, whoever else listens. */
    private static final class LostLeaseWarning implements LockListener {

        static final LostLeaseWarning INSTANCE = new LostLeaseWarning();

        private static final Logger lostLogger = LoggerFactory.getLogger(LeaseWatchdog.class);

        @Override
        public void leaseLost(LockContext lock, LeaseLossReason reason, String description) {
            OptionalLong fence = lock.fencingToken();
            lostLogger.warn("Lost distributed lock " + lock.lockKey().printableName() + " ("
                    + lock.lockKey().printableStoreKey()
                    + (fence.isPresent() ? ", fencing token " + fence.getAsLong() : "") + "): " + description
                    + ". Another owner may now run the guarded work.");
        }

    }

}
