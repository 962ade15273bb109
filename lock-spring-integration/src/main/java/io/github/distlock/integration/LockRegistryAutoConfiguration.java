package io.github.distlock.integration;

import java.time.Duration;

import io.github.distlock.LockService;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Declares a Spring Integration {@link LockRegistry} on the application's
 * {@link LockService} when Spring Integration is on the classpath, unless the application
 * declares its own registry. Its locks' lease is {@code distributed-lock.default-ttl}.
 */
@AutoConfiguration(afterName = "io.github.distlock.autoconfigure.DistributedLockAutoConfiguration")
@ConditionalOnClass(LockRegistry.class)
@ConditionalOnBean(LockService.class)
public class LockRegistryAutoConfiguration {

    /**
     * The lease when {@code distributed-lock.default-ttl} is not set, as for the lock
     * service.
     */
    static final Duration DEFAULT_TTL = Duration.ofSeconds(30);

    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    LockServiceLockRegistry lockServiceLockRegistry(LockService lockService, Environment environment) {
        Duration ttl = Binder.get(environment).bind("distributed-lock.default-ttl", Duration.class).orElse(DEFAULT_TTL);
        return new LockServiceLockRegistry(lockService, ttl);
    }

}
