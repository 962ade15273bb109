package io.github.distlock.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.distlock.LockLostEvent;
import io.github.distlock.LockService;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.core.LockBackend;

/**
 * Auto-configures the {@link LockService} on top of Spring Boot's Redis connection factory.
 *
 * <p>The backend depends on the driver, as Spring Boot's own Redis configurations do: the native
 * {@link LettuceLockBackendConfiguration Lettuce backend} for a Lettuce connection factory, and
 * {@link SpringDataLockBackendConfiguration Spring Data's template and script API} for any other
 * (Jedis). An application's own {@link LockBackend} replaces either, and then nothing Redis-specific
 * is wired: no release subscription, waiters poll.
 *
 * <p>Backs off when Spring Data Redis is absent, when there is no single
 * {@link RedisConnectionFactory}, or with {@code distributed-lock.enabled=false}. Every bean can be
 * replaced by declaring one of the same type.
 */
@AutoConfiguration(after = RedisAutoConfiguration.class)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnSingleCandidate(RedisConnectionFactory.class)
@Conditional(OnDistributedLockEnabledCondition.class)
@EnableConfigurationProperties(DistributedLockProperties.class)
@Import({ LettuceLockBackendConfiguration.class, SpringDataLockBackendConfiguration.class })
public class DistributedLockAutoConfiguration {

    /** The threads waiting for a lock in this JVM, woken by release messages. */
    @Bean
    @ConditionalOnMissingBean
    public LockWaiters lockWaiters() {
        return new LockWaiters();
    }

    /** The one scheduler that renews every held lease; lost leases become {@link LockLostEvent}s. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public LeaseWatchdog leaseWatchdog(LockBackend lockBackend, DistributedLockProperties properties,
            ApplicationEventPublisher eventPublisher) {
        return new LeaseWatchdog(lockBackend, properties.getWatchdog().getRenewalRatio(),
                (handle, reason) -> eventPublisher.publishEvent(new LockLostEvent(handle, reason)));
    }

    /** The lock service used by the annotation and injected by applications. */
    @Bean
    @ConditionalOnMissingBean
    public LockService lockService(LockBackend lockBackend, LeaseWatchdog leaseWatchdog, LockWaiters lockWaiters,
            DistributedLockProperties properties) {
        return new DefaultLockService(lockBackend, leaseWatchdog, new LockDefaults(properties.getKeyPrefix(),
                properties.getDefaultTtl(), properties.getDefaultWaitTime(), properties.getWatchdog().isEnabled()),
                lockWaiters);
    }
}
