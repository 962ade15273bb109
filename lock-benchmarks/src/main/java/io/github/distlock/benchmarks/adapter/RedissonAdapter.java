package io.github.distlock.benchmarks.adapter;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson 4.7 with its defaults: {@link RLock} (a hash {@code uuid:threadId -> count})
 * or {@link RFencedLock} (the same plus an {@code INCR}ed token), both with the watchdog
 * on, i.e. locked without a lease time. Waiting uses Redisson's per-lock pub/sub.
 */
final class RedissonAdapter implements LockAdapter, LeaseHolder {

    private static final String PREFIX = "redisson:";

    private final RedissonClient client;

    private final boolean fenced;

    private final long waitMillis;

    /**
     * @param watchdogTimeout the watchdog's lease (renewed every third of it), or
     * {@code null} for Redisson's default of 30 s, which matches our default ttl
     */
    RedissonAdapter(RedisTarget target, boolean fenced, Duration watchdogTimeout) {
        Config config = new Config();
        config.useSingleServer().setAddress(target.uri());
        if (watchdogTimeout != null) {
            config.setLockWatchdogTimeout(watchdogTimeout.toMillis());
        }
        this.client = Redisson.create(config);
        this.fenced = fenced;
        this.waitMillis = target.waitTime().toMillis();
    }

    @Override
    public void runLocked(String key, Runnable criticalSection) {
        RLock lock = lock(key);
        if (!acquire(lock, waitMillis)) {
            throw new LockNotAcquiredException(key);
        }
        try {
            criticalSection.run();
        }
        finally {
            lock.unlock();
        }
    }

    @Override
    public Lease hold(String key) {
        RLock lock = lock(key);
        if (!acquire(lock, 0)) {
            throw new LockNotAcquiredException(key);
        }
        return () -> {
            try {
                lock.unlock();
                return true;
            }
            catch (IllegalMonitorStateException lost) {
                // Redisson's way of saying the lock is no longer ours: it expired.
                return false;
            }
        };
    }

    private RLock lock(String key) {
        return fenced ? client.getFencedLock(PREFIX + key) : client.getLock(PREFIX + key);
    }

    private boolean acquire(RLock lock, long waitMillis) {
        try {
            if (lock instanceof RFencedLock fencedLock) {
                // The call that returns the token, as a user of a fenced lock makes it.
                return fencedLock.tryLockAndGetToken(waitMillis, TimeUnit.MILLISECONDS) != null;
            }
            return lock.tryLock(waitMillis, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + lock.getName(), ex);
        }
    }

    @Override
    public void close() {
        client.shutdown();
    }

}
