package io.github.distlock.benchmarks.adapter;

import java.time.Duration;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;

/**
 * Ours through {@link LockService} in an application whose only store is etcd or
 * ZooKeeper ({@link OurApplication#startOn}): default ttl (30 s) with the watchdog on,
 * the target's wait time, the backend the store's auto-configuration declares.
 */
final class OursOnStoreAdapter implements LockAdapter {

    private final OurApplication application;

    private final LockService lockService;

    private final Duration waitTime;

    OursOnStoreAdapter(OurApplication application, Duration waitTime) {
        this.application = application;
        this.lockService = application.bean(LockService.class);
        this.waitTime = waitTime;
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
    public void close() {
        application.close();
    }

}
