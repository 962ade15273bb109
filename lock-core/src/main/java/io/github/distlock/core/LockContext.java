package io.github.distlock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;

/**
 * One call's lock, as {@link LockListener}s see it: from the start of the acquisition to
 * its release or loss. Read-only for listeners, except for the attributes they keep on
 * it.
 *
 * <p>
 * It never exposes the holder's random token: that token is a capability (whoever knows
 * it can release the lock), so nothing built on this seam can leak it.
 *
 * <pre>{@code
 * public void acquiring(LockContext lock) {
 *     lock.put(Timer.Sample.class, Timer.start(registry));
 * }
 * public void released(LockContext lock, ReleaseOutcome outcome) {
 *     Timer.Sample sample = lock.get(Timer.Sample.class);
 *     ...
 * }
 * }</pre>
 */
public final class LockContext {

    private final LockKey key;

    private final String name;

    private final String backend;

    private final long ttlMillis;

    private final boolean watchdog;

    private final String threadName;

    private final long startedNanos;

    private volatile @Nullable Map<Object, Object> attributes;

    // Written by the acquiring thread before acquired() is dispatched; read by others
    // after it.
    private volatile boolean waited;

    private volatile boolean handedOver;

    private volatile long acquiredNanos;

    private volatile @Nullable Instant acquiredAt;

    private volatile @Nullable DefaultLockHandle handle;

    /** Written only by the watchdog's thread. */
    private volatile int renewals;

    LockContext(LockKey key, String name, long ttlMillis, boolean watchdog, long startedNanos) {
        this(key, name, DefaultLockService.DEFAULT_BACKEND, ttlMillis, watchdog, startedNanos);
    }

    LockContext(LockKey key, String name, String backend, long ttlMillis, boolean watchdog, long startedNanos) {
        this.key = key;
        this.name = name;
        this.backend = backend;
        this.ttlMillis = ttlMillis;
        this.watchdog = watchdog;
        this.threadName = Thread.currentThread().getName();
        this.startedNanos = startedNanos;
    }

    /**
     * The name of the backend that keeps the lock ({@code redis}, {@code etcd}, ...), or
     * {@value DefaultLockService#DEFAULT_BACKEND} for a lock service built without one.
     * Low cardinality: fit for a metric tag.
     */
    public String backend() {
        return backend;
    }

    /**
     * What metrics and traces call this kind of lock: the request's name, the
     * annotation's name or {@code Class.method}, or {@value LockRequest#UNNAMED}. Low
     * cardinality: fit for a metric tag.
     */
    public String name() {
        return name;
    }

    /**
     * The key this call locks, for example {@code order:42}. High cardinality: traces
     * only, never a metric tag.
     */
    public String key() {
        return key.name();
    }

    /** The store's key for it, for example {@code lock:{order:42}} in Redis. */
    public String storeKey() {
        return key.storeKey();
    }

    /**
     * The store's key for it.
     * @deprecated since the store-neutral SPI, the key is not always a Redis key: use
     * {@link #storeKey()}
     */
    @Deprecated(since = "0.1.0")
    public String redisKey() {
        return key.storeKey();
    }

    /** The lease the caller asked for. */
    public Duration ttl() {
        return Duration.ofMillis(ttlMillis);
    }

    /** Whether the watchdog renews this lease until release. */
    public boolean watchdog() {
        return watchdog;
    }

    /**
     * The name of the thread that asked for the lock (and, unless it handed the handle
     * on, holds it).
     */
    public String threadName() {
        return threadName;
    }

    /** {@link System#nanoTime()} when the acquisition started. */
    public long startedNanos() {
        return startedNanos;
    }

    /** Whether the caller had to wait: its first attempt found the lock held. */
    public boolean waited() {
        return waited;
    }

    /**
     * Whether the lock came to this caller through the backend's wait queue: handed over
     * by the previous holder's release, rather than found free by an attempt.
     */
    public boolean handedOver() {
        return handedOver;
    }

    /**
     * How long the acquisition took: until it was acquired, or until now while it still
     * runs or after it failed.
     */
    public Duration waitTime() {
        long end = acquiredNanos;
        return Duration.ofNanos((end != 0 ? end : System.nanoTime()) - startedNanos);
    }

    /** When the lock was acquired (wall clock), or {@code null} while it is not. */
    public @Nullable Instant acquiredAt() {
        return acquiredAt;
    }

    /** The handle, once acquired; {@code null} before. */
    public @Nullable LockHandle handle() {
        return handle;
    }

    /** How many watchdog renewals succeeded so far. */
    public int renewals() {
        return renewals;
    }

    /**
     * How long this JVM counts the lease to last from now, counted from when the last
     * acquire or renew command was sent; zero once it ran out or the lock is not held.
     */
    public Duration leaseLeft() {
        DefaultLockHandle held = handle;
        if (held == null || !held.isHeld()) {
            return Duration.ZERO;
        }
        return Duration.ofNanos(Math.max(0, held.leaseDeadlineNanos() - System.nanoTime()));
    }

    /** The fencing token, if one was issued to this holder (never drawn by this call). */
    public OptionalLong fencingToken() {
        DefaultLockHandle held = handle;
        return held != null ? held.issuedFencingToken() : OptionalLong.empty();
    }

    /** Keeps a listener's per-lock state, for example a started timer. */
    public void put(Object attributeKey, Object value) {
        Map<Object, Object> map = attributes;
        if (map == null) {
            synchronized (this) {
                map = attributes;
                if (map == null) {
                    map = new ConcurrentHashMap<>(4);
                    attributes = map;
                }
            }
        }
        map.put(attributeKey, value);
    }

    /**
     * A listener's per-lock state put under the class itself as the key, or {@code null}.
     */
    public <T> @Nullable T get(Class<T> attributeKey) {
        return attributeKey.cast(get((Object) attributeKey));
    }

    /** A listener's per-lock state, or {@code null}. */
    public @Nullable Object get(Object attributeKey) {
        Map<Object, Object> map = attributes;
        return map != null ? map.get(attributeKey) : null;
    }

    void markWaiting() {
        waited = true;
    }

    void markAcquired(DefaultLockHandle acquired, boolean byHandOver, long nowNanos) {
        handedOver = byHandOver;
        acquiredAt = Instant.now();
        acquiredNanos = nowNanos;
        handle = acquired;
    }

    void markRenewed() {
        renewals++;
    }

    LockKey lockKey() {
        return key;
    }

    @Override
    public String toString() {
        return "LockContext[name=" + name + ", key=" + key.printableName() + ", thread=" + threadName + ", held="
                + (handle != null && handle.isHeld()) + "]";
    }

}
