package io.github.distlock.aop;

import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * The locks the current thread holds through the annotation, so that a nested call on a
 * key it already holds joins the hold instead of waiting for itself.
 *
 * <p>
 * A small stack rather than a map: synchronous calls nest, so holds come and go in stack
 * order, nesting is shallow, and pushing or popping allocates nothing. A hold is
 * registered only while the call that acquired it runs on this thread; a call that hands
 * its work to a stage or publisher unregisters when it returns, because from then on the
 * work (not this thread) owns the lock.
 */
final class HeldLocks {

    private static final ThreadLocal<HeldLocks> CURRENT = ThreadLocal.withInitial(HeldLocks::new);

    private @Nullable LockHold[] holds = new LockHold[4];

    private int size;

    private HeldLocks() {
    }

    /** The current thread's registry. */
    static HeldLocks current() {
        return CURRENT.get();
    }

    /**
     * How many holds the current thread has registered; for tests that check nothing is
     * left behind.
     */
    static int countForCurrentThread() {
        return CURRENT.get().size;
    }

    /**
     * The hold this thread may join for {@code key} on {@code backend}: the innermost one
     * for that key on that store, if its lease is still held. A lost or expired hold is
     * not joined, so the nested call acquires the lock afresh instead of running
     * unguarded; nor is a hold of the same key on another store, which is another lock.
     */
    @Nullable LockHold find(String key, String backend) {
        for (int i = size - 1; i >= 0; i--) {
            LockHold hold = holds[i];
            if (hold.key().equals(key) && hold.backend().equals(backend)) {
                return (hold.handle().isHeld() ? hold : null);
            }
        }
        return null;
    }

    void push(LockHold hold) {
        if (size == holds.length) {
            holds = Arrays.copyOf(holds, size * 2);
        }
        holds[size++] = hold;
    }

    /**
     * Removes {@code hold}, normally the top of the stack; tolerates any position so a
     * misuse cannot corrupt it.
     */
    void remove(LockHold hold) {
        for (int i = size - 1; i >= 0; i--) {
            if (holds[i] == hold) {
                System.arraycopy(holds, i + 1, holds, i, size - i - 1);
                holds[--size] = null;
                return;
            }
        }
    }

}
