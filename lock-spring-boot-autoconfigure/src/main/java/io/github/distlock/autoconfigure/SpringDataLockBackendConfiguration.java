package io.github.distlock.autoconfigure;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.redis.HandOverSubscriber;
import io.github.distlock.redis.ReplicaAcks;
import io.github.distlock.redis.SpringDataLockBackend;

/**
 * The backend for any other connection factory (Jedis, or a factory declared as a plain
 * {@link RedisConnectionFactory}), through Spring Data Redis's template and script API,
 * on the locks' connection factory: the only one, the {@code @Primary} one, or the one
 * {@code distributed-lock.redis.connection-factory} names. Imported after
 * {@link LettuceLockBackendConfiguration}, so it applies exactly when that one did not
 * define a backend and the application defined none either.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = { "org.springframework.data.redis.connection.RedisConnectionFactory",
        LockServiceRequirement.REDIS_BACKEND })
@ConditionalOnMissingBean(LockBackend.class)
@Conditional(OnLockConnectionFactoryCondition.class)
class SpringDataLockBackendConfiguration {

    /** The single-Redis backend on Spring Data Redis, using Boot's connection factory. */
    @Bean(destroyMethod = "close")
    SpringDataLockBackend lockBackend(ConfigurableListableBeanFactory beanFactory, Environment environment,
            DistributedLockProperties properties) {
        return new SpringDataLockBackend(LockConnectionFactorySelection.resolve(beanFactory, environment),
                properties.getOperationTimeout(), properties.getKeyPrefix(),
                HandOverSubscriber.handOverChannel(properties.getKeyPrefix()),
                new ReplicaAcks(properties.getReplicaAcks(), properties.getReplicaAckTimeout()));
    }

    /**
     * The JVM's one subscription to hand-over messages; it subscribes on the first wait.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    HandOverSubscriber redisReleaseSubscriber(ConfigurableListableBeanFactory beanFactory, Environment environment,
            LockWaiters lockWaiters, DistributedLockProperties properties) {
        return new HandOverSubscriber(LockConnectionFactorySelection.resolve(beanFactory, environment),
                HandOverSubscriber.handOverChannel(properties.getKeyPrefix()), lockWaiters);
    }

}
