package io.github.distlock.zookeeper;

import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import io.github.distlock.core.NamedLockBackend;

/**
 * Builds the {@link ZooKeeperLockBackend} as the lock backend named {@code zookeeper}
 * when {@code distributed-lock.zookeeper.connect-string} is set, before the starter's own
 * auto-configuration: locks choose it with
 * {@code @DistributedLock(backend = "zookeeper")} or
 * {@code LockRequest.withBackend("zookeeper")}, and
 * {@code distributed-lock.backend=zookeeper} makes it the default (as it is when it is
 * the only store). An application's own bean named {@code zooKeeperLockBackend} wins.
 *
 * <pre>
 * distributed-lock.zookeeper.connect-string=zk1:2181,zk2:2181,zk3:2181
 * </pre>
 *
 * Fails the startup, naming the property and the fix, for a malformed connect string, an
 * ensemble that does not answer within {@code connection-timeout}, and a
 * {@code distributed-lock.default-ttl} longer than {@code session-timeout}.
 */
@AutoConfiguration(beforeName = "io.github.distlock.autoconfigure.DistributedLockAutoConfiguration")
@ConditionalOnClass(CuratorFramework.class)
@ConditionalOnProperty(prefix = "distributed-lock", name = "enabled", havingValue = "true", matchIfMissing = true)
@ConditionalOnProperty(prefix = "distributed-lock.zookeeper", name = "connect-string")
@EnableConfigurationProperties(ZooKeeperLockProperties.class)
public class ZooKeeperLockAutoConfiguration {

    /** What {@code distributed-lock.default-ttl} is when it is not set. */
    private static final Duration DEFAULT_TTL = Duration.ofSeconds(30);

    /**
     * The backend, on a client of its own, under the name {@code zookeeper}; closed with
     * the context, which ends its session and deletes its nodes.
     */
    @Bean
    @ConditionalOnMissingBean(name = "zooKeeperLockBackend")
    public NamedLockBackend zooKeeperLockBackend(ZooKeeperLockProperties properties, Environment environment) {
        ZooKeeperLockSettings settings = properties.toSettings();
        Duration defaultTtl = Binder.get(environment)
            .bind("distributed-lock.default-ttl", Duration.class)
            .orElse(DEFAULT_TTL);
        settings.requireTtlWithinSession(defaultTtl, "distributed-lock.default-ttl");
        return new NamedLockBackend("zookeeper", ZooKeeperLockBackend.connect(settings));
    }

}
