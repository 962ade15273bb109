package io.github.distlock.aop;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import org.jspecify.annotations.Nullable;

import io.github.distlock.LockHandle;

/**
 * One lock taken through the annotation, which nested calls on the same thread join
 * instead of acquiring it again.
 *
 * <p>
 * It counts who still needs the lock: the call that acquired it, plus every nested call
 * that joined it and returned a stage or publisher that may complete after the acquiring
 * call has returned. The last one to let go releases, so a joined asynchronous call never
 * loses its lock to the outer call's exit.
 */
final class LockHold {

    private static final AtomicIntegerFieldUpdater<LockHold> USERS = AtomicIntegerFieldUpdater
        .newUpdater(LockHold.class, "users");

    private final String key;

    /**
     * The backend's name, resolved: a nested call joins a hold only on the same store.
     */
    private final String backend;

    private final LockHandle handle;

    /** The acquiring call, plus joined calls that may outlive it. */
    private volatile int users = 1;

    /**
     * Created on the first call that asks to be interrupted; only touched by the thread
     * the hold is registered on.
     */
    private @Nullable InterruptOnLoss interrupt;

    LockHold(String key, String backend, LockHandle handle) {
        this.key = key;
        this.backend = backend;
        this.handle = handle;
    }

    String key() {
        return key;
    }

    String backend() {
        return backend;
    }

    LockHandle handle() {
        return handle;
    }

    /** A joined call that may outlive the acquiring one needs the lock too. */
    void retain() {
        USERS.incrementAndGet(this);
    }

    /**
     * One user is done with the lock.
     * @return whether it was the last one, which must release it
     */
    boolean letGo() {
        return USERS.decrementAndGet(this) == 0;
    }

    /**
     * The current thread runs a method that wants to be interrupted if this lease is
     * lost.
     */
    void armInterrupt() {
        if (interrupt == null) {
            interrupt = new InterruptOnLoss(Thread.currentThread());
            handle.onLost(interrupt);
        }
        interrupt.arm();
    }

    /**
     * That method returned: a later loss must not interrupt whatever the thread does
     * next.
     */
    void disarmInterrupt() {
        interrupt.disarm();
    }

    @Override
    public String toString() {
        return "LockHold[" + key + ", users=" + users + "]";
    }

}
