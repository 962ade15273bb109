package io.github.distlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockDurations;
import io.github.distlock.LockHandle;
import io.github.distlock.LockLostException;

/**
 * A held lock. State lives here, not in a thread-local, so any thread may release it.
 *
 * <p>
 * The local lease deadline is counted from the moment the acquire (or renew) command was
 * <em>sent</em>, with the lease Redis reported, so this JVM never believes it holds the
 * lock longer than Redis does.
 *
 * <p>
 * A lock taken by a bare {@code SET NX PX} has no fencing token until
 * {@link #fencingToken()} is first called, which draws one from Redis if the lock is
 * still ours.
 *
 * <p>
 * A lock with a minimum hold is released, before the minimum has passed, by cutting its
 * lease to what is left of the minimum ({@link LeaseAdjustingLockBackend#releaseAfter}).
 * That leaves our token in the store, so a renewal must never land after it: the watchdog
 * renews a lease only while holding {@link #renewalGuard}, and a release waits for the
 * guard before it sends anything.
 */
final class DefaultLockHandle implements LockHandle {

    private static final Logger logger = LoggerFactory.getLogger(DefaultLockHandle.class);

    private static final AtomicLongFieldUpdater<DefaultLockHandle> FENCING_TOKEN = AtomicLongFieldUpdater
        .newUpdater(DefaultLockHandle.class, "fencingToken");

    private final LockKey key;

    private final String token;

    /** 0 until issued; set once. */
    private volatile long fencingToken;

    /** The lease the watchdog renews to; {@link #extend} changes it. */
    private volatile long ttlMillis;

    /**
     * Held by the watchdog while a renewal of this lease is in flight, and by
     * {@link #extend}; a release waits for it, so no renewal or extension lands after the
     * release was sent.
     */
    private final ReentrantLock renewalGuard = new ReentrantLock();

    /** Whether a minimum hold applies; set before the handle is published. */
    private volatile boolean minHold;

    /** When the minimum hold ends, on {@link System#nanoTime()}. */
    private volatile long minHoldEndNanos;

    private final LockBackend backend;

    /**
     * Renews the lease, or (for a fixed lease with {@link #expiryReported}) reports it
     * lost when it runs out; {@code null} for a fixed lease nobody watches.
     */
    private final @Nullable LeaseWatchdog watchdog;

    /**
     * A fixed lease whose running out before the release is a lost lock: the watchdog
     * reports it when it runs out, and a release that finds the key gone reports it too.
     */
    private final boolean expiryReported;

    private final PendingReleases pendingReleases;

    private final AtomicBoolean released = new AtomicBoolean();

    private volatile boolean lost;

    /** Guarded by itself; emptied once the listeners have run. */
    private final List<Consumer<? super LockHandle>> lostListeners = new ArrayList<>(0);

    private volatile long leaseDeadlineNanos;

    private final LockContext context;

    private final LockListener listener;

    /**
     * Written by the watchdog (and by {@code watch} on the acquiring thread); read by
     * {@link LeaseWatchdog#lag()} too.
     */
    private volatile long nextRenewalNanos;

    DefaultLockHandle(LockKey key, String token, long fencingToken, long ttlMillis, long leaseDeadlineNanos,
            LockBackend backend, @Nullable LeaseWatchdog watchdog, boolean expiryReported,
            PendingReleases pendingReleases, LockContext context, LockListener listener) {
        this.key = key;
        this.token = token;
        this.fencingToken = fencingToken;
        this.ttlMillis = ttlMillis;
        this.backend = backend;
        this.watchdog = watchdog;
        this.expiryReported = expiryReported;
        this.pendingReleases = pendingReleases;
        this.leaseDeadlineNanos = leaseDeadlineNanos;
        this.context = context;
        this.listener = listener;
    }

    @Override
    public String key() {
        return key.name();
    }

    @Override
    public long fencingToken() {
        long issued = fencingToken;
        if (issued > 0) {
            return issued;
        }
        if (released.get()) {
            throw releasedBeforeFencing();
        }
        if (!(backend instanceof FencingLockBackend fencing)) {
            throw new UnsupportedOperationException("Lock " + key.printableName() + " has no fencing token: its "
                    + "backend (" + backend.getClass().getName() + ") issues none. Use a backend that implements "
                    + "FencingLockBackend (the Redis backends do).");
        }
        long drawn = fencing.issueFencingToken(key, token, ttlMillis);
        if (drawn == 0) {
            if (released.get()) {
                throw releasedBeforeFencing();
            }
            throw new LockLostException(key.name(), "Lock " + key.printableName() + " (" + key.printableStoreKey()
                    + ") no longer holds "
                    + "this handle's token: its lease ran out or another owner took it, so no fencing token can be "
                    + "issued for it. Another owner may be running the guarded work; do not write to the protected "
                    + "resource. Ask for the token early in the work, or with LockRequest.withFencingToken().");
        }
        // Threads asking at the same time may each draw a token; every one of them was
        // drawn while
        // the lock was ours, so the first one stored serves them all and the others go
        // unused.
        FENCING_TOKEN.compareAndSet(this, 0, drawn);
        return fencingToken;
    }

    @Override
    public OptionalLong issuedFencingToken() {
        long issued = fencingToken;
        return issued > 0 ? OptionalLong.of(issued) : OptionalLong.empty();
    }

    private IllegalStateException releasedBeforeFencing() {
        return new IllegalStateException(
                "Lock " + key.printableName() + " was released before its fencing token was asked "
                        + "for; a token is issued only while the lock is held. Ask for it before release().");
    }

    @Override
    public boolean isHeld() {
        return !released.get() && !lost && System.nanoTime() - leaseDeadlineNanos < 0;
    }

    @Override
    public boolean isLost() {
        return lost;
    }

    @Override
    public LockHandle onLost(Consumer<? super LockHandle> listener) {
        synchronized (lostListeners) {
            if (!lost) {
                lostListeners.add(listener);
                return this;
            }
        }
        notify(listener);
        return this;
    }

    @Override
    public boolean extend(Duration ttl) {
        long millis = LockDurations.requireValidTtl(key.name(), ttl);
        if (!(backend instanceof LeaseAdjustingLockBackend adjusting) || !adjusting.supportsLeaseAdjustment()) {
            throw new UnsupportedOperationException("Lock " + key.printableName() + " cannot be extended: its backend ("
                    + backend.getClass().getName() + ") cannot set a lease on its own token. Use a backend that "
                    + "implements LeaseAdjustingLockBackend (Redis, Redlock over Redis nodes, InMemoryLockBackend).");
        }
        renewalGuard.lock();
        try {
            if (released.get() || lost) {
                return false;
            }
            long sentAt = System.nanoTime();
            long deadline = sentAt + TimeUnit.MILLISECONDS.toNanos(backend.renewedValidityMillis(millis));
            boolean extended;
            try {
                extended = adjusting.extend(key, token, millis);
            }
            catch (LockBackendException ex) {
                // The store may hold the old lease or the new one: count the shorter.
                if (deadline - leaseDeadlineNanos < 0) {
                    leaseDeadlineNanos = deadline;
                }
                throw ex;
            }
            if (!extended) {
                leaseDeadlineNanos = sentAt;
                if (watchdog != null) {
                    watchdog.lost(this, "an extension found the key gone or holding another owner's token");
                }
                return false;
            }
            ttlMillis = millis;
            leaseDeadlineNanos = deadline;
            if (watchdog != null) {
                watchdog.extended(this, sentAt);
            }
            return true;
        }
        finally {
            renewalGuard.unlock();
        }
    }

    @Override
    public boolean release() {
        if (!released.compareAndSet(false, true)) {
            return false;
        }
        // Stop renewing before releasing, and let a renewal in flight land first: one
        // landing after a release that only shortened the lease (minimum hold) would
        // lengthen it again, as pooled connections keep no order between commands.
        if (watchdog != null) {
            watchdog.unwatch(this);
        }
        renewalGuard.lock();
        renewalGuard.unlock();
        long holdMillis = minHoldLeftMillis();
        boolean wasOurs;
        try {
            wasOurs = holdMillis > 0 ? ((LeaseAdjustingLockBackend) backend).releaseAfter(key, token, holdMillis)
                    : backend.release(key, token);
        }
        catch (LockBackendException ex) {
            // The release may not have run: retry it in the background, so the key does
            // not block the others for the rest of its lease (nor, with a minimum hold,
            // for longer than that).
            pendingReleases.releaseLater(key, token, ttlMillis, leaseDeadlineNanos, minHold, minHoldEndNanos);
            listener.released(context, LockListener.ReleaseOutcome.FAILED);
            throw ex;
        }
        if (!wasOurs && expiryReported && watchdog != null) {
            // The work that releases it outlasted the lease (or the key was deleted
            // behind its back), and the timer has not said so yet.
            if (System.nanoTime() - leaseDeadlineNanos >= 0) {
                watchdog.expired(this);
            }
            else {
                watchdog.lost(this, "the release found the key gone or holding another owner's token");
            }
        }
        listener.released(context,
                wasOurs ? LockListener.ReleaseOutcome.RELEASED : LockListener.ReleaseOutcome.ALREADY_GONE);
        return wasOurs;
    }

    @Override
    public boolean releaseAfter(Duration keepFor) {
        if (keepFor.isNegative() || keepFor.isZero()) {
            return release();
        }
        if (!(backend instanceof LeaseAdjustingLockBackend adjusting) || !adjusting.supportsLeaseAdjustment()) {
            throw new UnsupportedOperationException("Lock " + key.printableName() + " cannot stay held after its "
                    + "release: its backend (" + backend.getClass().getName() + ") cannot shorten a lease on its own "
                    + "token. Use a backend that implements LeaseAdjustingLockBackend (Redis, Redlock over Redis "
                    + "nodes, InMemoryLockBackend).");
        }
        // Capped where a lease is: longer would overflow the nanosecond clock.
        Duration capped = keepFor.compareTo(LockDurations.MAX_TTL) > 0 ? LockDurations.MAX_TTL : keepFor;
        long end = System.nanoTime() + capped.toNanos();
        // A minimum hold of the request that ends later still holds.
        if (!minHold || end - minHoldEndNanos > 0) {
            holdAtLeastUntil(end);
        }
        return release();
    }

    @Override
    public void close() {
        release();
    }

    /**
     * The minimum hold ends at {@code endNanos}: a release before then only shortens the
     * lease. Called before the handle is published, and by {@link #releaseAfter}.
     */
    void holdAtLeastUntil(long endNanos) {
        minHoldEndNanos = endNanos;
        minHold = true;
    }

    /** What is left of the minimum hold now, in ms rounded up; 0 if none is left. */
    long minHoldLeftMillis() {
        if (!minHold) {
            return 0;
        }
        long left = minHoldEndNanos - System.nanoTime();
        return left <= 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(left + 999_999);
    }

    /** See {@link #renewalGuard}. */
    ReentrantLock renewalGuard() {
        return renewalGuard;
    }

    LockKey lockKey() {
        return key;
    }

    String token() {
        return token;
    }

    long ttlMillis() {
        return ttlMillis;
    }

    boolean isReleased() {
        return released.get();
    }

    long leaseDeadlineNanos() {
        return leaseDeadlineNanos;
    }

    void leaseExtended(long sentAtNanos, long validityMillis) {
        leaseDeadlineNanos = sentAtNanos + TimeUnit.MILLISECONDS.toNanos(validityMillis);
        context.markRenewed();
        listener.renewed(context, true);
    }

    /** A renewal failed; the watchdog retries it while the lease lasts. */
    void renewalFailed() {
        listener.renewed(context, false);
    }

    /**
     * Marks the lease lost at once ({@link #isHeld()} turns false), and tells, once, this
     * handle's {@code onLost} listeners and then the {@link LockListener}s (the WARN, the
     * event, metrics), on {@code listenerExecutor}: a slow listener must not hold up
     * whoever found the loss.
     * @return whether this call marked it (false if it was lost already)
     */
    boolean markLost(Executor listenerExecutor, LockListener.LeaseLossReason reason, String description) {
        List<Consumer<? super LockHandle>> listeners;
        synchronized (lostListeners) {
            if (lost) {
                return false;
            }
            lost = true;
            listeners = List.copyOf(lostListeners);
            lostListeners.clear();
        }
        try {
            listenerExecutor.execute(() -> {
                listeners.forEach(this::notify);
                listener.leaseLost(context, reason, description);
            });
        }
        catch (RejectedExecutionException ex) {
            // The watchdog is closing: nobody is left to tell.
        }
        return true;
    }

    private void notify(Consumer<? super LockHandle> listener) {
        try {
            listener.accept(this);
        }
        catch (RuntimeException ex) {
            logger.warn("A lost-lease listener of lock " + key.printableName() + " failed", ex);
        }
    }

    long nextRenewalNanos() {
        return nextRenewalNanos;
    }

    void nextRenewalNanos(long nanos) {
        nextRenewalNanos = nanos;
    }

    @Override
    public String toString() {
        long issued = fencingToken;
        return "LockHandle[key=" + key.printableName() + ", fencingToken=" + (issued > 0 ? issued : "not issued")
                + ", held=" + isHeld() + "]";
    }

}
