package io.github.distlock.autoconfigure.actuate;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.actuate.DistributedLockHealthIndicator;
import io.github.distlock.actuate.LockBackendHealth;
import io.github.distlock.autoconfigure.DistributedLockProperties;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.NamedLockBackend;

/**
 * The {@code distributedLock} health contributor on Spring Boot 3's health API
 * ({@code org.springframework.boot.actuate.health}), imported by
 * {@link DistributedLockActuatorAutoConfiguration}. The only class of the
 * auto-configuration that names a Boot 3 health type; on Boot 4 its condition (by class
 * name) leaves it out.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.springframework.boot.actuate.health.AbstractHealthIndicator")
@ConditionalOnEnabledHealthIndicator("distributed-lock")
class Boot3HealthConfiguration {

    /**
     * Named so that the contributor is {@code distributedLock} in
     * {@code /actuator/health}.
     */
    @Bean
    @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
    DistributedLockHealthIndicator distributedLockHealthIndicator(ObjectProvider<LockBackend> lockBackend,
            ObjectProvider<LeaseWatchdog> leaseWatchdog, DistributedLockProperties properties,
            ObjectProvider<NamedLockBackend> namedBackends) {
        return new DistributedLockHealthIndicator(new LockBackendHealth(lockBackend.getIfUnique(),
                leaseWatchdog.getIfUnique(), properties.getOperationTimeout(), namedBackends.orderedStream().toList()));
    }

}
