package io.github.distlock.benchmarks.adapter;

import java.time.Duration;

import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties.ClientType;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;

/**
 * Ours through {@link LockService}, as an application injects it: default ttl (30 s) with
 * the watchdog on, the target's wait time, on Lettuce (Boot's default) or Jedis; with or
 * without Micrometer registries in the application.
 */
final class OursLockServiceAdapter implements LockAdapter, LeaseHolder {

    private final OurApplication application;

    private final LockService lockService;

    private final Duration waitTime;

    private final Duration leaseTtl;

    OursLockServiceAdapter(RedisTarget target, Duration leaseTtl, ClientType clientType, boolean micrometer) {
        this.application = OurApplication.start(target, leaseTtl, clientType, micrometer);
        this.lockService = application.bean(LockService.class);
        this.waitTime = target.waitTime();
        this.leaseTtl = leaseTtl;
    }

    @Override
    public void runLocked(String key, Runnable criticalSection) {
        LockHandle handle = lockService.tryLock(LockRequest.of(key).withWaitTime(waitTime))
            .orElseThrow(() -> new LockNotAcquiredException(key));
        try {
            criticalSection.run();
        }
        finally {
            handle.release();
        }
    }

    @Override
    public Lease hold(String key) {
        // The watchdog is left at its default (on): that is what this scenario measures.
        LockHandle handle = lockService.tryLock(LockRequest.of(key).withTtl(leaseTtl).withWaitTime(Duration.ZERO))
            .orElseThrow(() -> new LockNotAcquiredException(key));
        return handle::release;
    }

    @Override
    public void close() {
        application.close();
    }

}
