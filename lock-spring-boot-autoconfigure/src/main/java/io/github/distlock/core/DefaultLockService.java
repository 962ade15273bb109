package io.github.distlock.core;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.core.LockBackend.AcquireAttempt;

/**
 * The one implementation of acquire, wait and release behind {@link LockService}, the annotation
 * and every backend.
 */
public class DefaultLockService implements LockService {

    private static final Log logger = LogFactory.getLog(DefaultLockService.class);

    /**
     * Pauses between attempts while release messages are not being delivered (subscription down):
     * a short exponential backoff.
     */
    private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * With wake-ups on, a waiter still re-checks at the holder's lease end and at least this often:
     * a foreign client's DEL, an expiry or a lost message publishes nothing.
     */
    private static final long FALLBACK_POLL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final LockBackend backend;
    private final LeaseWatchdog watchdog;
    private final LockDefaults defaults;
    private final LockWaiters waiters;
    /**
     * Token sources, picked by thread id. One shared SecureRandom (NativePRNG on Linux) serialises
     * every acquisition on a global lock; a few independent generators don't, and unlike a
     * ThreadLocal they don't seed a new generator for every short-lived virtual thread.
     */
    private final SecureRandom[] randoms = newRandoms();

    /**
     * @param backend where locks are stored
     * @param watchdog renews leases of locks that ask for it
     * @param defaults what a request that leaves a field {@code null} gets
     * @param waiters where waiting threads park until a release message wakes them
     */
    public DefaultLockService(LockBackend backend, LeaseWatchdog watchdog, LockDefaults defaults,
            LockWaiters waiters) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.watchdog = Objects.requireNonNull(watchdog, "watchdog");
        this.defaults = Objects.requireNonNull(defaults, "defaults");
        this.waiters = Objects.requireNonNull(waiters, "waiters");
    }

    @Override
    public Optional<LockHandle> tryLock(LockRequest request) {
        Objects.requireNonNull(request, "request");
        String name = request.key();
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("The lock key must not be null or blank, was '" + name + "'.");
        }
        Duration ttl = request.ttl() != null ? request.ttl() : defaults.ttl();
        Duration waitTime = request.waitTime() != null ? request.waitTime() : defaults.waitTime();
        boolean renew = request.watchdog() != null ? request.watchdog() : defaults.watchdog();
        long ttlMillis = ttl.toMillis();
        if (ttlMillis <= 0) {
            throw new IllegalArgumentException("The ttl of lock '" + name + "' must be at least 1ms, was " + ttl + ".");
        }
        if (waitTime.isNegative()) {
            throw new IllegalArgumentException("The wait time of lock '" + name + "' must not be negative, was "
                    + waitTime + ". Use Duration.ZERO to try once.");
        }

        LockKey key = LockKey.of(defaults.keyPrefix(), name);
        String token = newToken();
        long deadline = System.nanoTime() + waitTime.toNanos();
        LockWaiters.Waiting waiting = null;
        long backoff = MIN_BACKOFF_NANOS;
        try {
            while (true) {
                long releasesSeen = waiting != null ? waiting.releasesSeen() : 0;
                long sentAt = System.nanoTime();
                long waitLeft = deadline - sentAt;
                AcquireAttempt attempt = backend.tryAcquire(key, token, ttlMillis,
                        waitLeft > 0 ? TimeUnit.NANOSECONDS.toMillis(waitLeft) + 1 : 0);
                if (attempt.acquired()) {
                    DefaultLockHandle handle = new DefaultLockHandle(key, token, attempt.fencingToken(), ttlMillis,
                            sentAt, backend, renew ? watchdog : null);
                    if (renew) {
                        watchdog.watch(handle);
                    }
                    return Optional.of(handle);
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return Optional.empty();
                }
                if (waiting == null) {
                    // Register, then try once more: a release between the first attempt and the
                    // registration would otherwise wake nobody.
                    waiting = waiters.enter(name);
                    continue;
                }
                long pause;
                if (waiters.notificationsActive()) {
                    pause = Math.min(remaining, FALLBACK_POLL_NANOS);
                }
                else {
                    pause = Math.min(remaining, ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1));
                    backoff = Math.min(MAX_BACKOFF_NANOS, backoff * 2);
                }
                // Never sleep past the holder's lease: it may expire without anyone publishing.
                if (attempt.holderTtlMillis() > 0) {
                    pause = Math.min(pause, TimeUnit.MILLISECONDS.toNanos(attempt.holderTtlMillis()));
                }
                waiting.await(releasesSeen, pause);
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    throw new LockAcquisitionException(name, "Interrupted while waiting for lock '" + name + "'.",
                            new InterruptedException());
                }
            }
        }
        finally {
            if (waiting != null) {
                waiters.leave(waiting);
            }
        }
    }

    @Override
    public LockHandle lock(LockRequest request) {
        return tryLock(request).orElseThrow(() -> new LockTimeoutException(request.key(),
                request.waitTime() != null ? request.waitTime() : defaults.waitTime()));
    }

    @Override
    public <T> T callLocked(LockRequest request, Callable<T> action) throws Exception {
        Objects.requireNonNull(action, "action");
        LockHandle handle = lock(request);
        try {
            return action.call();
        }
        finally {
            releaseQuietly(handle);
        }
    }

    /**
     * Releases after guarded work has finished. A failed release must not turn finished work into
     * an error: the work ran under the lock, and the lease expires on its own.
     */
    private static void releaseQuietly(LockHandle handle) {
        try {
            if (!handle.release()) {
                logger.warn("Lock '" + handle.key() + "' had already expired when the work finished; another owner may "
                        + "have run concurrently. Raise the ttl or keep the watchdog on.");
            }
        }
        catch (LockBackendException ex) {
            logger.warn("Could not release lock '" + handle.key() + "'; it expires after its ttl", ex);
        }
    }

    private static SecureRandom[] newRandoms() {
        int stripes = Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors() * 2 - 1)) * 2;
        SecureRandom[] randoms = new SecureRandom[stripes];
        for (int i = 0; i < stripes; i++) {
            randoms[i] = newRandom();
        }
        return randoms;
    }

    private static SecureRandom newRandom() {
        try {
            return SecureRandom.getInstance("DRBG");
        }
        catch (NoSuchAlgorithmException ex) {
            return new SecureRandom();
        }
    }

    private String newToken() {
        byte[] bytes = new byte[16];
        randoms[(int) Thread.currentThread().getId() & (randoms.length - 1)].nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /**
     * What a request gets for the fields it leaves {@code null}.
     *
     * @param keyPrefix prefix of every Redis key, for example {@code lock:}
     * @param ttl the default lease
     * @param waitTime the default wait
     * @param watchdog whether leases are renewed by default
     */
    public record LockDefaults(String keyPrefix, Duration ttl, Duration waitTime, boolean watchdog) {
    }
}
