package io.github.distlock.integration;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.github.distlock.LockDurations;
import io.github.distlock.LockHandle;
import io.github.distlock.LockService;
import org.jspecify.annotations.Nullable;

import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@code LockRegistry} whose locks are {@link LockService} locks: an
 * aggregator, an idempotent receiver or a {@code LockRegistryLeaderInitiator} given this
 * registry locks across every JVM on the starter's store, with its watchdog, metrics and
 * lost-lease signals.
 *
 * <p>
 * How the {@link java.util.concurrent.locks.Lock} contract maps onto lock handles:
 * <ul>
 * <li>A lock is owned by the thread that took it, as the interface demands: a local
 * {@code ReentrantLock} per key orders this JVM's threads, and the first hold of a thread
 * takes a {@link io.github.distlock.LockHandle} from the lock service. Holds are
 * reentrant; only the owning thread may {@code unlock()} (others get
 * {@link IllegalStateException}), and the last unlock releases the handle.</li>
 * <li>A reentrant {@code tryLock} checks that the handle still holds the lock; if its
 * lease was lost it takes a new one, or returns {@code false}, which is how
 * {@code LockRegistryLeaderInitiator} notices it is no longer leader.</li>
 * <li>{@code lock()} waits as long as it takes and ignores interrupts (the flag stays
 * set); {@code lockInterruptibly()} and {@code tryLock(time, unit)} throw
 * {@link InterruptedException}.</li>
 * <li>The lease is the registry's ttl (or the one given to
 * {@link DistributedLock#lock(Duration)}), renewed by the lock service's watchdog while
 * held; {@link #renewLock(Object, Duration)} sets it explicitly.</li>
 * <li>An {@code unlock()} that finds the lock no longer ours (its lease ran out, or an
 * operator removed it) throws {@link java.util.ConcurrentModificationException}, as
 * Spring Integration's own registries do.</li>
 * </ul>
 *
 * <p>
 * The Spring Boot auto-configuration declares one; by hand:
 *
 * <pre>{@code
 * &#64;Bean
 * LockServiceLockRegistry lockRegistry(LockService lockService) {
 *     return new LockServiceLockRegistry(lockService, Duration.ofSeconds(30));
 * }
 * &#64;Bean
 * LockRegistryLeaderInitiator leaderInitiator(LockRegistry<?> lockRegistry) {
 *     return new LockRegistryLeaderInitiator(lockRegistry);
 * }
 * }</pre>
 */
public class LockServiceLockRegistry
        implements RenewableLockRegistry<DistributedLock>, ExpirableLockRegistry<DistributedLock> {

    private final LockService lockService;

    private final Duration ttl;

    private final Map<String, ServiceDistributedLock> locks = new ConcurrentHashMap<>();

    /**
     * @param lockService where the locks are taken, on its default backend
     * @param ttl the lease of each lock unless {@link DistributedLock#lock(Duration)}
     * gives one; the watchdog renews it while the lock is held
     */
    public LockServiceLockRegistry(LockService lockService, Duration ttl) {
        LockDurations.requireValidTtl("(the LockServiceLockRegistry's ttl)", ttl);
        this.lockService = lockService;
        this.ttl = ttl;
    }

    /**
     * The lock of {@code lockKey}; the same object for the same key until
     * {@link #expireUnusedOlderThan} drops it.
     * @param lockKey the lock's name: a {@code String}, or any object whose
     * {@code toString()} names it
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        String key = keyOf(lockKey);
        ServiceDistributedLock lock = this.locks.computeIfAbsent(key,
                (name) -> new ServiceDistributedLock(this.lockService, name, this.ttl));
        lock.obtained();
        return lock;
    }

    @Override
    public void renewLock(Object lockKey) {
        renewLock(lockKey, this.ttl);
    }

    /**
     * Sets the remaining lease of a lock the calling thread holds.
     * @throws IllegalStateException if the calling thread does not hold the lock, or it
     * is no longer ours in the store
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        String key = keyOf(lockKey);
        ServiceDistributedLock lock = this.locks.get(key);
        if (lock == null) {
            throw new IllegalStateException("Lock '" + key + "' cannot be renewed: it was never obtained from this "
                    + "registry, so the calling thread does not hold it");
        }
        lock.renew(ttl);
    }

    /**
     * The lock service's handle under a lock that a thread of this JVM holds: for its
     * fencing token, or to be told when its lease is lost. A leader passes the token to
     * what it protects, so that a leader that was paused past its lease is refused:
     *
     * <pre>{@code
     * &#64;EventListener
     * void onGranted(OnGrantedEvent event) {
     *     long fence = lockRegistry.heldHandle(event.getRole()).orElseThrow().fencingToken();
     *     scheduler.startLeading(fence);   // every write carries it; older tokens are refused
     * }
     * }</pre>
     * @param lockKey the lock's name, as given to {@link #obtain}
     * @return the handle, or empty if no thread of this JVM holds the lock
     */
    public Optional<LockHandle> heldHandle(Object lockKey) {
        ServiceDistributedLock lock = this.locks.get(keyOf(lockKey));
        return (lock != null) ? lock.heldHandle() : Optional.empty();
    }

    /**
     * Forgets the locks not held and not obtained for {@code age} milliseconds. Safe at
     * any time: a lock forgotten here is still excluded across JVMs by the store; a later
     * {@link #obtain} makes a new object.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.nanoTime();
        this.locks.values().removeIf((lock) -> lock.isUnusedFor(now, TimeUnit.MILLISECONDS.toNanos(age)));
    }

    private static String keyOf(@Nullable Object lockKey) {
        if (lockKey == null) {
            throw new IllegalArgumentException("A LockRegistry key must not be null");
        }
        return lockKey.toString();
    }

}
