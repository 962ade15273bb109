package io.github.distlock.etcd;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import io.github.distlock.core.LockBackend;

/**
 * The etcd store as the application's {@link LockBackend} when
 * {@code distributed-lock.etcd.endpoints} is set and {@code lock-etcd} is on the
 * classpath. It runs before the core's auto-configuration, which then builds the lock
 * service on it instead of on Redis; an application's own {@code LockBackend} bean still
 * wins. The startup fails, naming the property and the fix, if the endpoints are
 * malformed or no member answers.
 *
 * <pre>{@code
 * distributed-lock.etcd.endpoints=http://etcd-1:2379,http://etcd-2:2379,http://etcd-3:2379
 * }</pre>
 *
 * Choosing the store per lock ({@code backend = "etcd"}) is the core's routing, which
 * does not exist yet: until then the etcd store, once configured, serves every lock.
 * Until the core's check of property names knows {@code distributed-lock.etcd.*}, it
 * rejects them when the core's auto-configuration runs too; declare an
 * {@link EtcdLockBackend} bean there instead.
 */
@AutoConfiguration(beforeName = "io.github.distlock.autoconfigure.DistributedLockAutoConfiguration")
@ConditionalOnClass(io.etcd.jetcd.Client.class)
@ConditionalOnProperty(prefix = EtcdSettings.PREFIX, name = "endpoints")
@EnableConfigurationProperties(EtcdLockProperties.class)
public class EtcdLockAutoConfiguration {

    /**
     * The etcd backend, connected and checked; Spring closes it (and its client) at
     * shutdown.
     */
    @Bean
    @ConditionalOnMissingBean(LockBackend.class)
    public EtcdLockBackend etcdLockBackend(EtcdLockProperties properties) {
        return EtcdLockBackend.connect(properties.toSettings());
    }

}
