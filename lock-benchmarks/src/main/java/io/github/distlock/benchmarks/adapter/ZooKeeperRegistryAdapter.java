package io.github.distlock.benchmarks.adapter;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.springframework.integration.zookeeper.lock.ZookeeperLockRegistry;

/**
 * Spring Integration's {@link ZookeeperLockRegistry} (an {@code InterProcessMutex} per
 * key behind a {@code Lock}) on a Curator client of its own, connected like
 * {@link CuratorMutexAdapter}'s. Its locks are thread-bound too: {@link #runLocked} locks
 * and unlocks on the calling thread.
 */
final class ZooKeeperRegistryAdapter implements LockAdapter {

    private final CuratorFramework client;

    private final ZookeeperLockRegistry registry;

    private final long waitMillis;

    ZooKeeperRegistryAdapter(ConsensusTarget target) {
        this.client = CuratorMutexAdapter.connect(target);
        this.registry = new ZookeeperLockRegistry(client, "/bench-si");
        this.waitMillis = target.waitTime().toMillis();
    }

    @Override
    public void runLocked(String key, Runnable criticalSection) {
        Lock lock = registry.obtain(key);
        boolean locked;
        try {
            locked = lock.tryLock(waitMillis, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a ZookeeperLockRegistry lock", ex);
        }
        if (!locked) {
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
    public void close() {
        registry.destroy();
        client.close();
    }

}
