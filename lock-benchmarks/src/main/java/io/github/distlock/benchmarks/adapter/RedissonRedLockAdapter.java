package io.github.distlock.benchmarks.adapter;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's Redlock as its documentation shows it: one {@link RedissonClient} per
 * independent master, one {@link RLock} per client under the same name, and a
 * {@link RedissonRedLock} over them, locked with {@code tryLock(wait)} and no lease time
 * (each node's lock then has Redisson's watchdog, 30 s). Every client keeps Redisson's
 * defaults, as a user's would.
 *
 * <p>
 * {@code RedissonRedLock} is marked {@code @Deprecated} in the Redisson we measure; it is
 * still the only Redlock Redisson ships (its {@code getMultiLock} needs every node, not a
 * majority), so it is what a user who wants a Redlock from Redisson gets. It takes the
 * node locks one after the other.
 */
@SuppressWarnings("deprecation")
final class RedissonRedLockAdapter implements LockAdapter {

    private static final String PREFIX = "redisson:";

    private final List<RedissonClient> clients = new ArrayList<>();

    private final long waitMillis;

    /**
     * @param target a Redlock target: one client is opened per node
     * @throws IllegalArgumentException if the target has fewer than 3 nodes
     */
    RedissonRedLockAdapter(RedisTarget target) {
        if (target.nodePorts().size() < 3) {
            throw new IllegalArgumentException(
                    "a Redlock needs at least 3 nodes, the target has " + target.nodePorts());
        }
        try {
            for (String uri : target.nodeUris()) {
                Config config = new Config();
                config.useSingleServer().setAddress(uri);
                clients.add(Redisson.create(config));
            }
        }
        catch (RuntimeException ex) {
            close();
            throw ex;
        }
        this.waitMillis = target.waitTime().toMillis();
    }

    @Override
    public void runLocked(String key, Runnable criticalSection) {
        RLock[] perNode = new RLock[clients.size()];
        for (int i = 0; i < perNode.length; i++) {
            perNode[i] = clients.get(i).getLock(PREFIX + key);
        }
        RedissonRedLock lock = new RedissonRedLock(perNode);
        boolean acquired;
        try {
            acquired = lock.tryLock(waitMillis, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + key, ex);
        }
        if (!acquired) {
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
        for (RedissonClient client : clients) {
            client.shutdown();
        }
    }

}
