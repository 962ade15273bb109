package io.github.distlock.autoconfigure;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.redis.HandOverSubscriber;
import io.github.distlock.redis.RedisHandOverNotifications;
import io.github.distlock.redis.ReplicaAcks;

/**
 * The native Lettuce backend, when the locks' connection factory (the only one, the
 * {@code @Primary} one, or the one {@code distributed-lock.redis.connection-factory}
 * names) is a {@link LettuceConnectionFactory} (Spring Boot's default): its own pipelined
 * connection, with re-sent commands detected. Backs off, subscription included, when the
 * application defines its own {@link LockBackend}.
 *
 * <p>
 * The factory is matched by its bean type, so a factory declared as a plain
 * {@link RedisConnectionFactory} gets {@link SpringDataLockBackendConfiguration}'s
 * backend, which works on Lettuce too.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = { "org.springframework.data.redis.connection.RedisConnectionFactory",
        "io.lettuce.core.RedisClient", LockServiceRequirement.REDIS_BACKEND })
@ConditionalOnMissingBean(LockBackend.class)
@Conditional(OnLockConnectionFactoryCondition.Lettuce.class)
class LettuceLockBackendConfiguration {

    /** The single-Redis backend on Lettuce, using Boot's connection factory. */
    @Bean(destroyMethod = "close")
    LettuceLockBackend lockBackend(ConfigurableListableBeanFactory beanFactory, Environment environment,
            DistributedLockProperties properties, RedisHandOverNotifications releaseNotifications) {
        return new LettuceLockBackend(LockConnectionFactorySelection.resolve(beanFactory, environment),
                properties.getOperationTimeout(), properties.getKeyPrefix(), releaseNotifications,
                new ReplicaAcks(properties.getReplicaAcks(), properties.getReplicaAckTimeout()));
    }

    /**
     * Chooses, and logs, how releases announce hand-overs: sharded pub/sub in a Redis
     * Cluster 7+, the global channel otherwise. Waiters then ask it, not the global
     * subscriber, whether wake-ups arrive.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RedisHandOverNotifications releaseNotifications(ConfigurableListableBeanFactory beanFactory,
            Environment environment, HandOverSubscriber redisReleaseSubscriber, LockWaiters lockWaiters,
            DistributedLockProperties properties) {
        RedisConnectionFactory connectionFactory = LockConnectionFactorySelection.resolve(beanFactory, environment);
        boolean shardedAllowed = properties
            .getClusterNotifications() != DistributedLockProperties.ClusterNotifications.GLOBAL;
        return new RedisHandOverNotifications(connectionFactory, properties.getKeyPrefix(), shardedAllowed,
                redisReleaseSubscriber, lockWaiters, properties.getOperationTimeout());
    }

    /**
     * The JVM's one subscription to hand-over messages; it subscribes on the first wait.
     * The bean keeps the name it had before its type was renamed, as does
     * {@link #releaseNotifications}.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    HandOverSubscriber redisReleaseSubscriber(ConfigurableListableBeanFactory beanFactory, Environment environment,
            LockWaiters lockWaiters, DistributedLockProperties properties) {
        return new HandOverSubscriber(LockConnectionFactorySelection.resolve(beanFactory, environment),
                HandOverSubscriber.handOverChannel(properties.getKeyPrefix()), lockWaiters);
    }

}
