package io.github.distlock.autoconfigure.actuate;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.LockService;
import io.github.distlock.actuate.DistributedLockHealthIndicator;
import io.github.distlock.actuate.LockBackendHealth;
import io.github.distlock.actuate.LocksEndpoint;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockProperties;
import io.github.distlock.core.ActiveLocks;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockBackend;

/**
 * The {@code locks} Actuator endpoint and the {@code distributedLock} health contributor, in an
 * application that has the Actuator and a {@link LockService}.
 *
 * <p>The endpoint, and the {@link ActiveLocks} listener that feeds it, exist only when the endpoint
 * is available (enabled and exposed: {@code management.endpoints.web.exposure.include=locks}), so
 * an application that does not expose it pays nothing per lock. The health contributor is on unless
 * {@code management.health.distributed-lock.enabled=false}.
 *
 * <p>Spring Boot 4 moved the health API ({@code org.springframework.boot.health.*}): each Boot
 * generation's health classes are named only as strings in the conditions of a configuration of
 * their own, so this class loads on either. The health contributor is Spring Boot 3's for now; on
 * Boot 4 only the endpoint is registered.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
@ConditionalOnBean({ LockService.class, LockBackend.class })
public class DistributedLockActuatorAutoConfiguration {

    /** The endpoint, and the listener of this JVM's holders and waiters that it lists. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnAvailableEndpoint(endpoint = LocksEndpoint.class)
    static class LocksEndpointConfiguration {

        /** Told of every lock by the lock service, like every {@code LockListener} bean. */
        @Bean
        @ConditionalOnMissingBean
        ActiveLocks activeLocks() {
            return new ActiveLocks();
        }

        @Bean
        @ConditionalOnMissingBean
        LocksEndpoint locksEndpoint(ActiveLocks activeLocks, LockBackend lockBackend) {
            return new LocksEndpoint(activeLocks, lockBackend);
        }
    }

    /** Spring Boot 3's health API ({@code org.springframework.boot.actuate.health}). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.health.AbstractHealthIndicator")
    @ConditionalOnEnabledHealthIndicator("distributed-lock")
    static class Boot3HealthConfiguration {

        /** Named so that the contributor is {@code distributedLock} in {@code /actuator/health}. */
        @Bean
        @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
        DistributedLockHealthIndicator distributedLockHealthIndicator(LockBackend lockBackend,
                ObjectProvider<LeaseWatchdog> leaseWatchdog, DistributedLockProperties properties) {
            return new DistributedLockHealthIndicator(new LockBackendHealth(lockBackend, leaseWatchdog.getIfUnique(),
                    properties.getOperationTimeout()));
        }
    }
}
