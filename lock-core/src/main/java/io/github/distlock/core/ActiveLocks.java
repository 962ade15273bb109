package io.github.distlock.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * The locks this JVM holds and the callers of this JVM waiting for one, as a
 * {@link LockListener} sees them: what the Actuator's {@code locks} endpoint lists.
 * Registered only when that endpoint is, so an application without it pays nothing.
 *
 * <p>
 * A lock is listed from {@link #acquired} until {@link #released} or {@link #leaseLost};
 * a caller waits from {@link #waiting} until it acquires or gives up. A handle that is
 * never released and has no watchdog leaves the list once its lease has run out.
 *
 * <pre>{@code
 * ActiveLocks active = new ActiveLocks();
 * LockService service = new DefaultLockService(backend, watchdog, defaults, waiters,
 *         LockListeners.of(List.of(active)));
 * active.held().forEach(lock -> System.out.println(lock.key() + " held by " + lock.threadName()));
 * }</pre>
 */
public final class ActiveLocks implements LockListener {

    private static final int MIN_PRUNE_SIZE = 256;

    // Keyed by identity: a LockContext is one call's lock, from acquiring to release or
    // loss.
    private final Set<LockContext> held = ConcurrentHashMap.newKeySet();

    private final Set<LockContext> waiting = ConcurrentHashMap.newKeySet();

    /**
     * Size of {@code held} above which an acquisition first drops leases that ran out
     * unreleased.
     */
    private volatile int pruneAt = MIN_PRUNE_SIZE;

    @Override
    public void waiting(LockContext lock) {
        waiting.add(lock);
    }

    @Override
    public void acquired(LockContext lock) {
        waiting.remove(lock);
        held.add(lock);
        if (held.size() > pruneAt) {
            // Only a handle that is never released grows the set: keep that leak bounded.
            pruneExpired();
            pruneAt = Math.max(MIN_PRUNE_SIZE, held.size() * 2);
        }
    }

    @Override
    public void notAcquired(LockContext lock, AcquireOutcome outcome, @Nullable Throwable cause) {
        waiting.remove(lock);
    }

    @Override
    public void leaseLost(LockContext lock, LeaseLossReason reason, String description) {
        held.remove(lock);
    }

    @Override
    public void released(LockContext lock, ReleaseOutcome outcome) {
        held.remove(lock);
    }

    /** The locks held in this JVM now, longest-held first. */
    public List<LockContext> held() {
        pruneExpired();
        List<LockContext> snapshot = new ArrayList<>(held);
        snapshot.sort(Comparator.comparing(LockContext::acquiredAt, Comparator.nullsLast(Comparator.naturalOrder())));
        return snapshot;
    }

    /** The callers in this JVM waiting for a lock now, longest-waiting first. */
    public List<LockContext> waiting() {
        List<LockContext> snapshot = new ArrayList<>(waiting);
        // Differences, not values: nanoTime may be negative and wrap.
        snapshot.sort((a, b) -> Long.signum(a.startedNanos() - b.startedNanos()));
        return snapshot;
    }

    /**
     * Drops locks that can never be held again: released or lost without this listener
     * being told (it was added late), or leases without a watchdog that ran out
     * unreleased. A watched lease past its local deadline stays: a renewal in flight may
     * still extend it, and the watchdog reports it lost otherwise.
     */
    private void pruneExpired() {
        held.removeIf(lock -> {
            DefaultLockHandle handle = (DefaultLockHandle) lock.handle();
            return handle == null || handle.isReleased() || handle.isLost() || (!lock.watchdog() && !handle.isHeld());
        });
    }

}
