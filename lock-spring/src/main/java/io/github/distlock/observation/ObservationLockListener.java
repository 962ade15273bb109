package io.github.distlock.observation;

import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

import io.github.distlock.core.LockContext;
import io.github.distlock.core.LockListener;
import io.github.distlock.observation.LockObservationContext.HoldOutcome;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * Observes every lock twice: its acquisition
 * ({@link LockObservationDocumentation#LOCK_ACQUIRE}, from {@link #acquiring} to
 * {@link #acquired} or {@link #notAcquired}) and its hold
 * ({@link LockObservationDocumentation#LOCK_HOLD}, from {@link #acquired} to
 * {@link #released} or {@link #leaseLost}). What the observations become depends on the
 * registry's handlers: with Micrometer's {@code DefaultMeterObservationHandler} a timer
 * and a long-task timer each, with a tracer a span each.
 *
 * <p>
 * No scope is opened: a hold may end on another thread than the one that started it (a
 * handle can be released anywhere, and a lost lease is reported by the watchdog), and a
 * scope must be closed where it was opened. Both observations take the observation
 * current when the lock is requested (an HTTP request's, say) as their parent.
 *
 * <pre>{@code
 * ObservationRegistry registry = ObservationRegistry.create();
 * registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meterRegistry));
 * LockListener listener = new ObservationLockListener(registry, null, null);
 * }</pre>
 */
public class ObservationLockListener implements LockListener {

    /**
     * This listener's state on each {@link LockContext}; a private key, so no other
     * listener collides with it.
     */
    private final Object stateKey = new Object();

    private final ObservationRegistry registry;

    private final @Nullable LockAcquireObservationConvention customAcquireConvention;

    private final @Nullable LockHoldObservationConvention customHoldConvention;

    private final DefaultLockAcquireObservationConvention defaultAcquireConvention;

    private final DefaultLockHoldObservationConvention defaultHoldConvention;

    /**
     * @param registry where the observations go
     * @param acquireConvention replaces {@link DefaultLockAcquireObservationConvention},
     * or {@code null}
     * @param holdConvention replaces {@link DefaultLockHoldObservationConvention}, or
     * {@code null}
     */
    public ObservationLockListener(ObservationRegistry registry,
            @Nullable LockAcquireObservationConvention acquireConvention,
            @Nullable LockHoldObservationConvention holdConvention) {
        this.registry = registry;
        this.customAcquireConvention = acquireConvention;
        this.customHoldConvention = holdConvention;
        this.defaultAcquireConvention = new DefaultLockAcquireObservationConvention();
        this.defaultHoldConvention = new DefaultLockHoldObservationConvention();
    }

    @Override
    public void acquiring(LockContext lock) {
        if (registry.isNoop()) {
            // Nothing would be recorded: keep the uninstrumented path free of
            // allocations.
            return;
        }
        LockObservationContext.Acquire context = new LockObservationContext.Acquire(lock);
        Observation acquire = LockObservationDocumentation.LOCK_ACQUIRE
            .observation(customAcquireConvention, defaultAcquireConvention, () -> context, registry)
            .start();
        lock.put(stateKey, new State(context, acquire));
    }

    @Override
    public void acquired(LockContext lock) {
        State state = state(lock);
        if (state == null) {
            return;
        }
        state.acquireContext.outcome(AcquireOutcome.ACQUIRED);
        state.acquire.stop();
        LockObservationContext.Hold context = new LockObservationContext.Hold(lock);
        state.holdContext = context;
        state.hold.set(LockObservationDocumentation.LOCK_HOLD
            .observation(customHoldConvention, defaultHoldConvention, () -> context, registry)
            .start());
    }

    @Override
    public void notAcquired(LockContext lock, AcquireOutcome outcome, @Nullable Throwable cause) {
        State state = state(lock);
        if (state == null) {
            return;
        }
        state.acquireContext.outcome(outcome);
        if (cause != null) {
            state.acquire.error(cause);
        }
        state.acquire.stop();
    }

    @Override
    public void leaseLost(LockContext lock, LeaseLossReason reason, String description) {
        endHold(lock, HoldOutcome.LOST);
    }

    @Override
    public void released(LockContext lock, ReleaseOutcome outcome) {
        endHold(lock, HoldOutcome.of(outcome));
    }

    private void endHold(LockContext lock, HoldOutcome outcome) {
        State state = state(lock);
        if (state == null) {
            return;
        }
        // The watchdog's listener thread (lost) and the holder (release) may race: the
        // first one ends the hold.
        Observation hold = state.hold.getAndSet(null);
        if (hold == null) {
            return;
        }
        state.holdContext.outcome(outcome);
        hold.stop();
    }

    private @Nullable State state(LockContext lock) {
        return (State) lock.get(stateKey);
    }

    /** One lock's observations. */
    private static final class State {

        final LockObservationContext.Acquire acquireContext;

        final Observation acquire;

        /**
         * Written before {@link #hold} is set; read only by whoever takes the hold back
         * out of it.
         */
        volatile LockObservationContext.@Nullable Hold holdContext;

        final AtomicReference<@Nullable Observation> hold = new AtomicReference<>();

        State(LockObservationContext.Acquire acquireContext, Observation acquire) {
            this.acquireContext = acquireContext;
            this.acquire = acquire;
        }

    }

}
