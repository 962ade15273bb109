package io.github.distlock;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Several locks taken together by {@link LockService#lockAll(List)}: one
 * {@link LockHandle} per distinct key, in the sorted order they were acquired in. Like a
 * single handle it owns its locks, not a thread, and releases them all at once.
 *
 * <pre>{@code
 * try (MultiLockHandle locks = lockService.lockAll(List.of("account:" + from, "account:" + to), null, null)) {
 *     ledger.transfer(from, to, amount, locks.handle("account:" + to).fencingToken());
 * }
 * }</pre>
 */
public final class MultiLockHandle implements AutoCloseable {

    private final List<LockHandle> handles;

    MultiLockHandle(List<LockHandle> handles) {
        this.handles = Collections.unmodifiableList(new ArrayList<>(handles));
    }

    /** The handles, one per distinct key, in acquisition (sorted key) order. */
    public List<LockHandle> handles() {
        return handles;
    }

    /** The distinct keys, sorted: the order in which they were acquired. */
    public List<String> keys() {
        return handles.stream().map(LockHandle::key).toList();
    }

    /**
     * The handle of one of the keys, for example to draw its fencing token.
     * @throws IllegalArgumentException if {@code key} is not one of {@link #keys()}
     */
    public LockHandle handle(String key) {
        for (LockHandle handle : handles) {
            if (handle.key().equals(key)) {
                return handle;
            }
        }
        throw new IllegalArgumentException(
                "No lock " + LockKeys.printable(key) + " among " + keys() + "; pass one of those keys.");
    }

    /**
     * Whether every one of the locks is still held as far as this JVM knows; see
     * {@link LockHandle#isHeld()}.
     */
    public boolean isHeld() {
        return handles.stream().allMatch(LockHandle::isHeld);
    }

    /**
     * Releases every lock, in reverse acquisition order, each with its own
     * compare-and-delete. A release that fails does not stop the others; its exception is
     * thrown after they ran (further failures suppressed), and its lease expires on its
     * own.
     * @return {@code true} if every lock was still ours when released; {@code false} if
     * any had already been released or had expired
     * @throws LockBackendException if Redis could not be reached for at least one of them
     */
    public boolean release() {
        return releaseAll(handles, handles.size());
    }

    /** Same as {@link #release()}, for try-with-resources. */
    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "MultiLockHandle" + keys();
    }

    /**
     * Releases the first {@code count} handles, last first; every one is tried whatever
     * the others do.
     */
    static boolean releaseAll(List<LockHandle> handles, int count) {
        boolean allOurs = true;
        RuntimeException failure = null;
        for (int i = count - 1; i >= 0; i--) {
            try {
                allOurs &= handles.get(i).release();
            }
            catch (RuntimeException ex) {
                if (failure == null) {
                    failure = ex;
                }
                else {
                    failure.addSuppressed(ex);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
        return allOurs;
    }

}
