package io.github.distlock.benchmarks.adapter;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Curator's {@link InterProcessMutex}, the raw client of ZooKeeper locks: one
 * {@code CuratorFramework} per adapter (Curator's recommended retry policy, the session
 * and connection timeouts ours defaults to), one mutex per lock name, reused. The mutex
 * is bound to the thread that acquired it, so {@link #runLocked} acquires and releases on
 * the calling thread, as Curator requires.
 */
final class CuratorMutexAdapter implements LockAdapter {

    /** What Curator's documentation recommends: 1 s base sleep, 3 retries. */
    static CuratorFramework connect(ConsensusTarget target) {
        CuratorFramework client = CuratorFrameworkFactory.newClient(target.zooKeeperConnectString(),
                (int) Duration.ofSeconds(60).toMillis(), (int) Duration.ofSeconds(15).toMillis(),
                new ExponentialBackoffRetry(1000, 3));
        client.start();
        try {
            if (!client.blockUntilConnected(15, TimeUnit.SECONDS)) {
                client.close();
                throw new IllegalStateException(
                        "Curator did not connect to " + target.zooKeeperConnectString() + " within 15 s");
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            client.close();
            throw new IllegalStateException("interrupted while connecting to ZooKeeper", ex);
        }
        return client;
    }

    private final CuratorFramework client;

    private final Map<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();

    private final long waitMillis;

    CuratorMutexAdapter(ConsensusTarget target) {
        this.client = connect(target);
        this.waitMillis = target.waitTime().toMillis();
    }

    @Override
    public void runLocked(String key, Runnable criticalSection) {
        InterProcessMutex mutex = mutexes.computeIfAbsent(key,
                name -> new InterProcessMutex(client, "/bench-curator/" + name));
        try {
            if (!mutex.acquire(waitMillis, TimeUnit.MILLISECONDS)) {
                throw new LockNotAcquiredException(key);
            }
        }
        catch (LockNotAcquiredException ex) {
            throw ex;
        }
        catch (Exception ex) {
            throw new IllegalStateException("InterProcessMutex.acquire of " + key + " failed", ex);
        }
        try {
            criticalSection.run();
        }
        finally {
            try {
                mutex.release();
            }
            catch (Exception ex) {
                throw new IllegalStateException("InterProcessMutex.release of " + key + " failed", ex);
            }
        }
    }

    @Override
    public void close() {
        client.close();
    }

}
