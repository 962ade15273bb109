package io.github.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.contract.ContractStore;
import io.github.distlock.testsupport.zookeeper.ZooKeeperTestEnsemble;

/**
 * A real three-member ZooKeeper ensemble as the contract's store: every application
 * instance of the class gets its own {@link ZooKeeperLockBackend} (its own client and
 * session) on it, and the side door is a Curator client of the test's own that reads and
 * deletes the lock nodes under {@code /distributed-lock}.
 */
final class ZooKeeperContractStore implements ContractStore {

    /**
     * The session of every instance: longer than the longest lease the contract takes (10
     * minutes), as a session must be
     * ({@link ZooKeeperLockSettings#requireTtlWithinSession}).
     */
    static final Duration SESSION_TIMEOUT = Duration.ofMinutes(11);

    /**
     * The settings of the running contract class. Static, because the application
     * instances are built from configuration classes; a test JVM runs one contract class
     * at a time.
     */
    private static volatile ZooKeeperLockSettings current;

    private final ZooKeeperTestEnsemble ensemble;

    private final CuratorFramework admin;

    private final ZooKeeperLockSettings settings;

    private ZooKeeperContractStore(ZooKeeperTestEnsemble ensemble) {
        this.ensemble = ensemble;
        this.settings = ZooKeeperLockSettings.of(ensemble.connectString()).withSessionTimeout(SESSION_TIMEOUT);
        this.admin = CuratorFrameworkFactory.newClient(ensemble.connectString(), 30_000, 15_000,
                new RetryNTimes(20, 250));
        this.admin.start();
        current = settings;
    }

    static ZooKeeperContractStore start() {
        return new ZooKeeperContractStore(ZooKeeperTestEnsemble.start());
    }

    ZooKeeperTestEnsemble ensemble() {
        return ensemble;
    }

    @Override
    public List<String> applicationProperties() {
        return List.of();
    }

    @Override
    public Class<?>[] applicationSources() {
        return new Class<?>[] { ZooKeeperBackend.class };
    }

    private String lockPath(String name) {
        return settings.rootPath() + "/" + ZooKeeperLockBackend.encode(name);
    }

    private List<String> line(String name) {
        try {
            admin.sync().forPath(lockPath(name));
            return ZooKeeperLockBackend.sorted(admin.getChildren().forPath(lockPath(name)));
        }
        catch (KeeperException.NoNodeException ex) {
            return List.of();
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not list " + lockPath(name), ex);
        }
    }

    @Override
    public boolean isHeld(String name) {
        return !line(name).isEmpty();
    }

    @Override
    public long leaseLeftMillis(String name) {
        List<String> line = line(name);
        if (line.isEmpty()) {
            return -2;
        }
        try {
            Stat stat = new Stat();
            byte[] data = admin.getData().storingStatIn(stat).forPath(lockPath(name) + "/" + line.get(0));
            long ttl = ZooKeeperLockBackend.ttlOf(data);
            assertThat(ttl).as("ttlMillis in %s", new String(data, StandardCharsets.UTF_8)).isPositive();
            return stat.getMtime() + ttl - System.currentTimeMillis();
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not read the holder of " + lockPath(name), ex);
        }
    }

    @Override
    public void takeAway(String name) {
        List<String> line = line(name);
        assertThat(line).as("%s is held", name).isNotEmpty();
        try {
            admin.delete().forPath(lockPath(name) + "/" + line.get(0));
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not delete the holder of " + lockPath(name), ex);
        }
    }

    @Override
    public long queueLength(String name) {
        return Math.max(0, line(name).size() - 1);
    }

    @Override
    public Set<String> leftovers(String name) {
        return new HashSet<>(line(name));
    }

    /**
     * The lock's parent node is what a counter would be elsewhere: deleting it must not
     * reset the tokens, which come from the ensemble's transaction ids.
     */
    @Override
    public void evictFencingCounter(String name) {
        assertThat(isHeld(name)).as("%s is free", name).isFalse();
        try {
            admin.delete().forPath(lockPath(name));
        }
        catch (KeeperException.NoNodeException ex) {
            // The ensemble removed the empty container already.
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not delete " + lockPath(name), ex);
        }
    }

    @Override
    public void reset() {
        try {
            if (admin.checkExists().forPath(settings.rootPath()) != null) {
                for (String lock : admin.getChildren().forPath(settings.rootPath())) {
                    admin.delete().quietly().deletingChildrenIfNeeded().forPath(settings.rootPath() + "/" + lock);
                }
            }
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not empty " + settings.rootPath(), ex);
        }
    }

    @Override
    public void close() {
        current = null;
        admin.close();
        ensemble.close();
    }

    @Override
    public String toString() {
        return ensemble.toString();
    }

    /** Each application instance's own backend, on the running class's ensemble. */
    @Configuration(proxyBeanMethods = false)
    static class ZooKeeperBackend {

        @Bean
        ZooKeeperLockBackend lockBackend() {
            ZooKeeperLockSettings settings = current;
            if (settings == null) {
                throw new IllegalStateException("No ZooKeeperContractStore was started");
            }
            return ZooKeeperLockBackend.connect(settings);
        }

    }

}
