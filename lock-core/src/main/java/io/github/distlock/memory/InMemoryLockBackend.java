package io.github.distlock.memory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.HandOverNotifications;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.LeaseAdjustingLockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.core.QueueingLockBackend;

/**
 * A lock store in this JVM's memory, with every capability the Redis store has: a wait
 * queue that hands the lock to the longest-waiting live waiter, fencing tokens, hand-over
 * wake-ups, inspection, and leases that can be shortened (a minimum hold) or set. It
 * passes the same contract suite as the Redis backends, so code written against
 * {@code LockService} or {@code @DistributedLock} behaves the same in a unit test as in
 * production, without a server.
 *
 * <p>
 * It is one store: every lock service built on the same instance sees the same locks, as
 * instances of an application share one Redis. It is not distributed, and keeps nothing
 * across a restart; use it for tests and for a single JVM only.
 *
 * <p>
 * In a Spring Boot test, declare it as a bean and the auto-configuration uses it instead
 * of Redis:
 *
 * <pre>{@code
 * &#64;TestConfiguration(proxyBeanMethods = false)
 * class InMemoryLocks {
 *     &#64;Bean
 *     InMemoryLockBackend lockBackend() {
 *         return new InMemoryLockBackend();
 *     }
 * }
 * }</pre>
 *
 * Without Spring, give it to a {@code DefaultLockService} with the waiters it wakes:
 *
 * <pre>{@code
 * InMemoryLockBackend backend = new InMemoryLockBackend();
 * LockWaiters waiters = new LockWaiters();
 * waiters.notificationsFrom(backend);
 * backend.deliverHandOversTo(waiters);
 * LockService locks = new DefaultLockService(backend, new LeaseWatchdog(backend, 1.0 / 3), defaults, waiters);
 * }</pre>
 *
 * <p>
 * Leases run on {@link System#nanoTime()} unless another clock is given
 * ({@link #InMemoryLockBackend(LongSupplier)}), so that a test can let a lease run out
 * without sleeping. Fencing tokens are strictly increasing across all locks of the
 * instance, and start from the wall clock in microseconds, as the Redis store's do.
 */
public final class InMemoryLockBackend implements QueueingLockBackend, FencingLockBackend, InspectableLockBackend,
        LeaseAdjustingLockBackend, HandOverNotifications {

    private final LongSupplier nanoClock;

    /** Every lock that is held or has waiters, by name; guarded by {@code this}. */
    private final Map<String, Entry> locks = new HashMap<>();

    private final List<LockWaiters> deliveries = new CopyOnWriteArrayList<>();

    /** The last fencing token drawn for any lock; guarded by {@code this}. */
    private long lastFencingToken;

    /** A store whose leases run on {@link System#nanoTime()}. */
    public InMemoryLockBackend() {
        this(System::nanoTime);
    }

    /**
     * A store whose leases run on {@code nanoClock}: a test clock lets a lease run out
     * without sleeping.
     * @param nanoClock the time in nanoseconds, as {@link System#nanoTime()} counts it
     * (only differences matter)
     */
    public InMemoryLockBackend(LongSupplier nanoClock) {
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    }

    /**
     * Adds {@code waiters} to the JVM's waiters that hand-overs are announced to; each
     * lock service has its own.
     */
    @Override
    public void deliverHandOversTo(LockWaiters waiters) {
        if (!deliveries.contains(waiters)) {
            deliveries.add(waiters);
        }
    }

    @Override
    public boolean startDelivery(LockKey key) {
        return true;
    }

    @Override
    public boolean isDelivering(LockKey key) {
        return true;
    }

    @Override
    public LockKey lockKey(String name) {
        return new LockKey(name, name);
    }

    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
        return tryAcquire(key, token, ttlMillis, 0, false, false);
    }

    @Override
    public synchronized AcquireResult tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis,
            boolean queued, boolean fencingToken) {
        long now = nanoClock.getAsLong();
        Entry entry = locks.computeIfAbsent(key.storeKey(), name -> new Entry());
        long lease = entry.heldBy(token, now) ? entry.leaseLeftMillis(now) : -1;
        if (lease < 0 && !entry.isHeld(now)) {
            entry.hold(token, ttlMillis, now);
            lease = ttlMillis;
        }
        if (lease >= 0) {
            entry.waiters.remove(token);
            return AcquireResult.acquired(fencingToken ? nextFencingToken(entry) : 0, lease);
        }
        if (queueMillis > 0) {
            // putIfAbsent keeps the place of a waiter that refreshes its entry.
            Waiter waiter = entry.waiters.putIfAbsent(token, new Waiter(now + millisToNanos(queueMillis), ttlMillis));
            if (waiter != null) {
                waiter.aliveUntil = Math.max(waiter.aliveUntil, now + millisToNanos(queueMillis));
                waiter.leaseMillis = ttlMillis;
            }
        }
        return AcquireResult.notAcquired(entry.leaseLeftMillis(now), lastFencingToken);
    }

    @Override
    public boolean release(LockKey key, String token) {
        HandOver handOver;
        synchronized (this) {
            long now = nanoClock.getAsLong();
            Entry entry = locks.get(key.storeKey());
            if (entry == null || !entry.heldBy(token, now)) {
                return false;
            }
            handOver = handOverOrFree(key.storeKey(), entry, now);
        }
        if (handOver != null) {
            String waiterId = LockWaiters.waiterId(handOver.token);
            for (LockWaiters waiters : deliveries) {
                waiters.handedOver(waiterId, handOver.fencingToken, handOver.token::equals);
            }
        }
        return true;
    }

    /**
     * Shortens the lease to {@code remainingMillis} if it holds {@code token} and has
     * more left; waiters keep their places and take the lock once it expires.
     */
    @Override
    public boolean releaseAfter(LockKey key, String token, long remainingMillis) {
        if (remainingMillis <= 0) {
            return release(key, token);
        }
        synchronized (this) {
            long now = nanoClock.getAsLong();
            Entry entry = locks.get(key.storeKey());
            if (entry == null || !entry.heldBy(token, now)) {
                return false;
            }
            long until = now + millisToNanos(remainingMillis);
            if (until - entry.expiresAt < 0) {
                entry.expiresAt = until;
            }
            return true;
        }
    }

    @Override
    public synchronized boolean extend(LockKey key, String token, long ttlMillis) {
        long now = nanoClock.getAsLong();
        Entry entry = locks.get(key.storeKey());
        if (entry == null || !entry.heldBy(token, now)) {
            return false;
        }
        entry.hold(token, ttlMillis, now);
        return true;
    }

    /**
     * Gives the lock to the longest-waiting live waiter, or frees it if there is none.
     */
    private @Nullable HandOver handOverOrFree(String name, Entry entry, long now) {
        for (Iterator<Map.Entry<String, Waiter>> it = entry.waiters.entrySet().iterator(); it.hasNext();) {
            Map.Entry<String, Waiter> next = it.next();
            it.remove();
            if (next.getValue().aliveUntil - now > 0) {
                entry.hold(next.getKey(), next.getValue().leaseMillis, now);
                return new HandOver(next.getKey(), nextFencingToken(entry));
            }
        }
        entry.free();
        locks.remove(name);
        return null;
    }

    @Override
    public synchronized AcquireResult stopWaiting(LockKey key, String token, long ttlMillis) {
        long now = nanoClock.getAsLong();
        Entry entry = locks.get(key.storeKey());
        if (entry == null) {
            return AcquireResult.notAcquired(0, lastFencingToken);
        }
        entry.waiters.remove(token);
        if (entry.heldBy(token, now)) {
            return AcquireResult.acquired(nextFencingToken(entry), entry.leaseLeftMillis(now));
        }
        forgetIfUnused(key.storeKey(), entry, now);
        return AcquireResult.notAcquired(entry.leaseLeftMillis(now), lastFencingToken);
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        List<RenewalOutcome> results = new ArrayList<>(renewals.size());
        synchronized (this) {
            long now = nanoClock.getAsLong();
            for (LeaseRenewal renewal : renewals) {
                Entry entry = locks.get(renewal.key().storeKey());
                boolean ours = entry != null && entry.heldBy(renewal.token(), now);
                if (ours) {
                    entry.hold(renewal.token(), renewal.ttlMillis(), now);
                }
                results.add(ours ? RenewalOutcome.RENEWED : RenewalOutcome.LOST);
            }
        }
        // Outside the store's monitor: what the outcomes set off (a lost-lock listener)
        // may use the store.
        for (int i = 0; i < results.size(); i++) {
            outcomes.outcome(i, results.get(i));
        }
    }

    @Override
    public synchronized long issueFencingToken(LockKey key, String token, long ttlMillis) {
        Entry entry = locks.get(key.storeKey());
        return entry != null && entry.heldBy(token, nanoClock.getAsLong()) ? nextFencingToken(entry) : 0;
    }

    @Override
    public synchronized LockState inspect(LockKey key) {
        long now = nanoClock.getAsLong();
        Entry entry = locks.get(key.storeKey());
        if (entry == null) {
            return LockState.free(0, 0);
        }
        long liveWaiters = entry.waiters.values().stream().filter(waiter -> waiter.aliveUntil - now > 0).count();
        return entry.isHeld(now) ? LockState.held(entry.leaseLeftMillis(now), liveWaiters, entry.lastFencingToken)
                : LockState.free(liveWaiters, entry.lastFencingToken);
    }

    @Override
    public Reachability ping() {
        return Reachability.single(new NodeReachability("in-memory", true, Duration.ZERO, null));
    }

    /**
     * Takes the lock {@code name} from its holder, as an operator deleting the key or an
     * expiry would: the holder finds out at its next renewal or release, and the next
     * acquirer gets it. Waiters keep their places.
     * @param name the lock's name
     * @return whether it was held
     */
    public synchronized boolean forceRelease(String name) {
        long now = nanoClock.getAsLong();
        Entry entry = locks.get(name);
        if (entry == null || !entry.isHeld(now)) {
            return false;
        }
        entry.free();
        forgetIfUnused(name, entry, now);
        return true;
    }

    /**
     * Forgets every lock and waiter, for a test's setup. Fencing tokens drawn afterwards
     * are still larger than every token drawn before.
     */
    public synchronized void clear() {
        locks.clear();
    }

    /** The names of the locks held now, for a test to see what is left behind. */
    public synchronized List<String> heldLocks() {
        long now = nanoClock.getAsLong();
        List<String> held = new ArrayList<>();
        locks.forEach((name, entry) -> {
            if (entry.isHeld(now)) {
                held.add(name);
            }
        });
        return held;
    }

    private void forgetIfUnused(String name, Entry entry, long now) {
        entry.waiters.values().removeIf(waiter -> waiter.aliveUntil - now <= 0);
        if (!entry.isHeld(now) && entry.waiters.isEmpty()) {
            locks.remove(name);
        }
    }

    /**
     * The next token: above every token drawn before for any lock, and at least the wall
     * clock in microseconds, so that tokens keep increasing for a lock whose entry was
     * dropped while it was free.
     */
    private long nextFencingToken(Entry entry) {
        Instant now = Instant.now();
        long micros = TimeUnit.SECONDS.toMicros(now.getEpochSecond()) + now.getNano() / 1_000;
        lastFencingToken = Math.max(lastFencingToken + 1, micros);
        entry.lastFencingToken = lastFencingToken;
        return lastFencingToken;
    }

    private static long millisToNanos(long millis) {
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }

    /**
     * One lock: its holder and lease, its waiters in arrival order, its last fencing
     * token.
     */
    private static final class Entry {

        @Nullable String holder;

        long expiresAt;

        long lastFencingToken;

        final LinkedHashMap<String, Waiter> waiters = new LinkedHashMap<>();

        boolean isHeld(long now) {
            return holder != null && expiresAt - now > 0;
        }

        boolean heldBy(String token, long now) {
            return isHeld(now) && holder.equals(token);
        }

        void hold(String token, long ttlMillis, long now) {
            holder = token;
            expiresAt = now + millisToNanos(ttlMillis);
        }

        void free() {
            holder = null;
        }

        /**
         * The lease left in ms, 0 if the lock is free; rounded up, so a held lock never
         * reports 0.
         */
        long leaseLeftMillis(long now) {
            if (!isHeld(now)) {
                return 0;
            }
            return TimeUnit.NANOSECONDS.toMillis(expiresAt - now + 999_999);
        }

    }

    /**
     * A queued waiter: until when its entry lives unless refreshed, and the lease it
     * asked for.
     */
    private static final class Waiter {

        long aliveUntil;

        long leaseMillis;

        Waiter(long aliveUntil, long leaseMillis) {
            this.aliveUntil = aliveUntil;
            this.leaseMillis = leaseMillis;
        }

    }

    private record HandOver(String token, long fencingToken) {
    }

}
