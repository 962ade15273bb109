package io.github.distlock.aop;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import io.github.distlock.LockHandle;

/**
 * Interrupts the thread running an {@code onLeaseLost = INTERRUPT} method when the
 * watchdog finds its lease lost, but only while such a method runs.
 *
 * <p>
 * A handle's loss listeners cannot be removed, so this one is neutralised instead: once
 * the method returned, a late loss does nothing, and an interrupt that raced with the
 * return is cleared, so it cannot hit whatever task the (possibly pooled) thread runs
 * next. The interrupt is the aspect's own signal, so its status is cleared once the
 * method returned in any case; the caller learns of the loss from
 * {@code LockLostException} and the event.
 */
final class InterruptOnLoss implements Consumer<LockHandle> {

    private static final int IDLE = 0;

    private static final int ARMED = 1;

    private static final int FIRING = 2;

    private static final int FIRED = 3;

    private static final int SPENT = 4;

    private final Thread thread;

    private final AtomicInteger state = new AtomicInteger(IDLE);

    /** Nested methods that asked for the interrupt; only touched by {@link #thread}. */
    private int depth;

    /** Whether this hook set the interrupt status, rather than finding it already set. */
    private volatile boolean interrupted;

    InterruptOnLoss(Thread thread) {
        this.thread = thread;
    }

    void arm() {
        if (depth++ == 0) {
            state.compareAndSet(IDLE, ARMED);
        }
    }

    void disarm() {
        if (--depth > 0 || state.compareAndSet(ARMED, IDLE)) {
            return;
        }
        // The loss fired: wait out the few instructions of a concurrent interrupt(), then
        // clear what we caused.
        while (state.get() == FIRING) {
            Thread.onSpinWait();
        }
        if (state.compareAndSet(FIRED, SPENT) && interrupted) {
            Thread.interrupted();
        }
    }

    /** Runs on the watchdog's thread when the lease is lost. */
    @Override
    public void accept(LockHandle lost) {
        if (!state.compareAndSet(ARMED, FIRING)) {
            return;
        }
        if (!thread.isInterrupted()) {
            interrupted = true;
            thread.interrupt();
        }
        state.set(FIRED);
    }

}
