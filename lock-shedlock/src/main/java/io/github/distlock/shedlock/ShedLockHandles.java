package io.github.distlock.shedlock;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

import io.github.distlock.LockHandle;

/**
 * The lock handle behind the ShedLock lock the current thread holds, for code that runs
 * under {@code @SchedulerLock} and wants what ShedLock itself does not offer: the fencing
 * token, the lost-lease listener.
 *
 * <pre>{@code
 * &#64;Scheduled(fixedRate = 60_000)
 * &#64;SchedulerLock(name = "settle-payments", lockAtMostFor = "5m")
 * void settle() {
 *     LockHandle lock = ShedLockHandles.current().orElseThrow();
 *     payments.settle(lock.fencingToken());   // the ledger refuses writes with an older token
 * }
 * }</pre>
 *
 * ShedLock takes and releases its locks on the thread that runs the task; a thread
 * holding nested ShedLock locks sees the innermost.
 */
public final class ShedLockHandles {

    private static final ThreadLocal<Deque<LockHandle>> HELD = ThreadLocal.withInitial(ArrayDeque::new);

    private ShedLockHandles() {
    }

    /**
     * @return the handle of the innermost ShedLock lock this thread holds through
     * {@link LockServiceLockProvider}, or empty outside of one
     */
    public static Optional<LockHandle> current() {
        return Optional.ofNullable(HELD.get().peekFirst());
    }

    static void push(LockHandle handle) {
        HELD.get().addFirst(handle);
    }

    static void remove(LockHandle handle) {
        Deque<LockHandle> held = HELD.get();
        held.removeFirstOccurrence(handle);
        if (held.isEmpty()) {
            HELD.remove();
        }
    }

}
