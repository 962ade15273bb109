package io.github.distlock.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.distlock.LockHandle;

/**
 * A held lock. State lives here, not in a thread-local, so any thread may release it.
 *
 * <p>The local lease deadline is counted from the moment the acquire (or renew) command was
 * <em>sent</em>, so this JVM never believes it holds the lock longer than Redis does.
 */
final class DefaultLockHandle implements LockHandle {

    private static final Log logger = LogFactory.getLog(DefaultLockHandle.class);

    private final LockKey key;
    private final String token;
    private final long fencingToken;
    private final long ttlMillis;
    private final LockBackend backend;
    private final LeaseWatchdog watchdog;
    private final AtomicBoolean released = new AtomicBoolean();
    private volatile boolean lost;
    /** Guarded by itself; emptied once the listeners have run. */
    private final List<Consumer<? super LockHandle>> lostListeners = new ArrayList<>(0);
    private volatile long leaseDeadlineNanos;

    /** Written and read only by the watchdog's thread. */
    private long nextRenewalNanos;

    DefaultLockHandle(LockKey key, String token, long fencingToken, long ttlMillis, long sentAtNanos,
            LockBackend backend, LeaseWatchdog watchdog) {
        this.key = key;
        this.token = token;
        this.fencingToken = fencingToken;
        this.ttlMillis = ttlMillis;
        this.backend = backend;
        this.watchdog = watchdog;
        this.leaseDeadlineNanos = sentAtNanos + ttlMillis * 1_000_000L;
    }

    @Override
    public String key() {
        return key.name();
    }

    @Override
    public long fencingToken() {
        return fencingToken;
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
    public boolean release() {
        if (!released.compareAndSet(false, true)) {
            return false;
        }
        // Stop renewing before deleting. A renewal already in flight cannot resurrect the key
        // either: it only extends a key that still holds our token.
        if (watchdog != null) {
            watchdog.unwatch(this);
        }
        return backend.release(key, token);
    }

    @Override
    public void close() {
        release();
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

    void leaseExtended(long sentAtNanos) {
        leaseDeadlineNanos = sentAtNanos + ttlMillis * 1_000_000L;
    }

    /** Marks the lease lost and runs the listeners, once. */
    void markLost() {
        List<Consumer<? super LockHandle>> listeners;
        synchronized (lostListeners) {
            if (lost) {
                return;
            }
            lost = true;
            listeners = List.copyOf(lostListeners);
            lostListeners.clear();
        }
        listeners.forEach(this::notify);
    }

    private void notify(Consumer<? super LockHandle> listener) {
        try {
            listener.accept(this);
        }
        catch (RuntimeException ex) {
            logger.warn("A lost-lease listener of lock '" + key.name() + "' failed", ex);
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
        return "LockHandle[key=" + key.name() + ", fencingToken=" + fencingToken + ", held=" + isHeld() + "]";
    }
}
