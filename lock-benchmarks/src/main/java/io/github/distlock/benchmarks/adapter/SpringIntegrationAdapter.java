package io.github.distlock.benchmarks.adapter;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Spring Integration's {@link RedisLockRegistry} (a local {@code ReentrantLock} per key
 * plus a Redis key), in {@code PUB_SUB_LOCK} or {@code SPIN_LOCK} mode, on its own
 * Lettuce connection factory.
 *
 * <p>
 * Its lease is fixed unless a renewal scheduler is set (opt-in): the lock scenarios use
 * the default, a 30 s expiry like our default ttl; the watchdog scenario sets the
 * scheduler, which renews each lock on its own every third of the expiry.
 */
final class SpringIntegrationAdapter implements LockAdapter, LeaseHolder {

    private static final String REGISTRY_KEY = "si";

    private static final Duration DEFAULT_EXPIRY = Duration.ofSeconds(30);

    private final LettuceConnectionFactory connectionFactory;

    private final RedisLockRegistry registry;

    private final ThreadPoolTaskScheduler renewalScheduler;

    private final long waitMillis;

    /**
     * @param leaseTtl the expiry with renewal on, or {@code null} for the default fixed
     * 30 s
     */
    SpringIntegrationAdapter(RedisTarget target, RedisLockType type, Duration leaseTtl) {
        connectionFactory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(target.host(), target.port()));
        connectionFactory.afterPropertiesSet();
        connectionFactory.start();
        registry = new RedisLockRegistry(connectionFactory, REGISTRY_KEY,
                (leaseTtl != null ? leaseTtl : DEFAULT_EXPIRY).toMillis());
        registry.setRedisLockType(type);
        if (leaseTtl != null) {
            renewalScheduler = new ThreadPoolTaskScheduler();
            renewalScheduler.setThreadNamePrefix("si-renewal-");
            // Let a renewal in flight finish at close instead of interrupting it
            // mid-command.
            renewalScheduler.setWaitForTasksToCompleteOnShutdown(true);
            renewalScheduler.setAwaitTerminationSeconds(5);
            renewalScheduler.initialize();
            registry.setRenewalTaskScheduler(renewalScheduler);
        }
        else {
            renewalScheduler = null;
        }
        waitMillis = target.waitTime().toMillis();
    }

    @Override
    public void runLocked(String key, Runnable criticalSection) {
        Lock lock = registry.obtain(key);
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
        Lock lock = registry.obtain(key);
        if (!acquire(lock, 0)) {
            throw new LockNotAcquiredException(key);
        }
        return () -> {
            try {
                lock.unlock();
                return true;
            }
            catch (RuntimeException expired) {
                // RedisLockRegistry throws when the key had expired in Redis before
                // unlock.
                return false;
            }
        };
    }

    private static boolean acquire(Lock lock, long waitMillis) {
        try {
            return lock.tryLock(waitMillis, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a RedisLockRegistry lock", ex);
        }
    }

    @Override
    public void close() {
        registry.destroy();
        if (renewalScheduler != null) {
            renewalScheduler.shutdown();
        }
        connectionFactory.destroy();
    }

}
