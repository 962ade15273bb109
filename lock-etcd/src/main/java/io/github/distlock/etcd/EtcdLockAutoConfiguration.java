package io.github.distlock.etcd;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import io.github.distlock.core.NamedLockBackend;

/**
 * The etcd store as the lock backend named {@code etcd} when
 * {@code distributed-lock.etcd.endpoints} is set and {@code lock-etcd} is on the
 * classpath: locks choose it with {@code @DistributedLock(backend = "etcd")} or
 * {@code LockRequest.withBackend("etcd")}, and {@code distributed-lock.backend=etcd}
 * makes it the default. The startup fails, naming the property and the fix, if the
 * endpoints are malformed or no member answers.
 *
 * <pre>{@code
 * distributed-lock.etcd.endpoints=http://etcd-1:2379,http://etcd-2:2379,http://etcd-3:2379
 * }</pre>
 *
 * An application that declares its own bean named {@code etcdLockBackend} keeps it.
 */
@AutoConfiguration(beforeName = "io.github.distlock.autoconfigure.DistributedLockAutoConfiguration")
@ConditionalOnClass(io.etcd.jetcd.Client.class)
@ConditionalOnProperty(prefix = EtcdSettings.PREFIX, name = "endpoints")
@EnableConfigurationProperties(EtcdLockProperties.class)
public class EtcdLockAutoConfiguration {

    /**
     * The etcd backend, connected and checked, under the name {@code etcd}; Spring closes
     * it (and its client) at shutdown.
     */
    @Bean
    @ConditionalOnMissingBean(name = "etcdLockBackend")
    public NamedLockBackend etcdLockBackend(EtcdLockProperties properties) {
        return new NamedLockBackend("etcd", EtcdLockBackend.connect(properties.toSettings()));
    }

}
