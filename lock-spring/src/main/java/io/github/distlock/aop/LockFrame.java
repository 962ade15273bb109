package io.github.distlock.aop;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.github.distlock.LockHandle;

/**
 * The locks of one call that has several keys or returns later (a stage or a publisher):
 * one hold per distinct key, in acquisition (sorted) order, each either acquired by this
 * call or joined from an outer call on the same thread. Ends exactly once, whichever of
 * completion, error or cancellation comes first.
 */
final class LockFrame {

    private final LockOperation operation;

    private final LockHold[] holds;

    private final boolean[] owned;

    private final boolean outlivesCall;

    private final AtomicBoolean ended = new AtomicBoolean();

    private final AtomicBoolean lossReported = new AtomicBoolean();

    /**
     * @param operation the method's lock
     * @param holds one hold per distinct key, in the order they were taken
     * @param owned per hold, whether this call acquired it (otherwise it joined an outer
     * call's hold)
     * @param outlivesCall whether the call's work may go on after the method returned, so
     * that joined holds were retained and must be let go at the end too
     */
    LockFrame(LockOperation operation, LockHold[] holds, boolean[] owned, boolean outlivesCall) {
        this.operation = operation;
        this.holds = holds;
        this.owned = owned;
        this.outlivesCall = outlivesCall;
    }

    LockOperation operation() {
        return operation;
    }

    int size() {
        return holds.length;
    }

    LockHold hold(int index) {
        return holds[index];
    }

    boolean owns(int index) {
        return owned[index];
    }

    /**
     * Whether the call must let go of the hold at {@code index} when it ends (acquired
     * it, or retained a join).
     */
    boolean uses(int index) {
        return owned[index] || outlivesCall;
    }

    /**
     * Makes the acquired holds joinable by nested calls on the current thread while the
     * method body runs.
     */
    void register(HeldLocks held, boolean interruptOnLoss) {
        for (int i = 0; i < holds.length; i++) {
            if (owned[i]) {
                held.push(holds[i]);
            }
        }
        if (interruptOnLoss) {
            for (LockHold hold : holds) {
                hold.armInterrupt();
            }
        }
    }

    /** The method body returned or threw: undoes {@link #register}. */
    void unregister(HeldLocks held, boolean interruptOnLoss) {
        if (interruptOnLoss) {
            for (int i = holds.length - 1; i >= 0; i--) {
                holds[i].disarmInterrupt();
            }
        }
        for (int i = holds.length - 1; i >= 0; i--) {
            if (owned[i]) {
                held.remove(holds[i]);
            }
        }
    }

    /** Calls {@code listener} when the lease of any of the call's locks is lost. */
    void onLost(Consumer<? super LockHandle> listener) {
        for (LockHold hold : holds) {
            hold.handle().onLost(listener);
        }
    }

    /**
     * @return {@code true} for the first caller only: the one that lets go of the holds
     */
    boolean end() {
        return ended.compareAndSet(false, true);
    }

    /**
     * @return {@code true} for the first caller only: a lost lease is reported once per
     * call
     */
    boolean reportLoss() {
        return lossReported.compareAndSet(false, true);
    }

}
