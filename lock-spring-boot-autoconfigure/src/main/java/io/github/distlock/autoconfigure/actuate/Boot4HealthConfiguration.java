package io.github.distlock.autoconfigure.actuate;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.actuate.DistributedLockBoot4HealthIndicator;
import io.github.distlock.actuate.LockBackendHealth;
import io.github.distlock.autoconfigure.DistributedLockProperties;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.NamedLockBackend;

/**
 * The {@code distributedLock} health contributor on Spring Boot 4's health API
 * ({@code org.springframework.boot.health}, artifact {@code spring-boot-health}),
 * imported by {@link DistributedLockActuatorAutoConfiguration}. The only class of the
 * auto-configuration that names a Boot 4 health type; on Boot 3 its condition (by class
 * name) leaves it out before it is loaded, and Boot 4's
 * {@code @ConditionalOnEnabledHealthIndicator}, absent there, is not read.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.AbstractHealthIndicator")
@ConditionalOnEnabledHealthIndicator("distributed-lock")
class Boot4HealthConfiguration {

    /**
     * Named so that the contributor is {@code distributedLock} in
     * {@code /actuator/health}.
     */
    @Bean
    @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
    DistributedLockBoot4HealthIndicator distributedLockHealthIndicator(ObjectProvider<LockBackend> lockBackend,
            ObjectProvider<LeaseWatchdog> leaseWatchdog, DistributedLockProperties properties,
            ObjectProvider<NamedLockBackend> namedBackends) {
        return new DistributedLockBoot4HealthIndicator(new LockBackendHealth(lockBackend.getIfUnique(),
                leaseWatchdog.getIfUnique(), properties.getOperationTimeout(), namedBackends.orderedStream().toList()));
    }

}
