package io.github.distlock.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.distlock.LockLostEvent;
import io.github.distlock.LockService;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.HandOverNotifications;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockListener;
import io.github.distlock.core.LockListeners;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.NamedLockBackend;

/**
 * Auto-configures the {@link LockService} on top of a {@link LockBackend}: by default one
 * on Spring Boot's Redis connection factory.
 *
 * <p>
 * With {@code distributed-lock.redlock.nodes} set, {@link RedlockBackendConfiguration
 * Redlock} over those independent masters backs every lock. Otherwise the backend depends
 * on the driver, as Spring Boot's own Redis configurations do, each configuration with
 * its own conditions: the native {@link LettuceLockBackendConfiguration Lettuce backend}
 * for a Lettuce connection factory, and {@link SpringDataLockBackendConfiguration Spring
 * Data's template and script API} for any other (Jedis). Both need Spring Data Redis and
 * a single {@link RedisConnectionFactory}. An application's own {@link LockBackend} bean
 * replaces either, and then nothing Redis-specific is wired (no connection, no hand-over
 * subscription) and no connection factory is needed at all:
 *
 * <pre>{@code
 * &#64;Bean
 * LockBackend lockBackend() {
 *     return new MyRedlockBackend(...);   // LockService, the watchdog and the annotation use it
 * }
 * }</pre>
 *
 * <p>
 * Backs off when there is no backend (no Spring Data Redis, or no single connection
 * factory, and none declared) or with {@code distributed-lock.enabled=false}. Every bean
 * can be replaced by declaring one of the same type.
 */
// By name, not by class: Spring Boot 4 moved Redis's auto-configuration to its own module
// and
// package, so each name exists on one Boot generation only, and a class literal would not
// load on
// the other. Ordering after an absent name is simply ignored, so one jar serves both.
@AutoConfiguration(afterName = { "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
        "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration" })
@Conditional(OnDistributedLockEnabledCondition.class)
@EnableConfigurationProperties(DistributedLockProperties.class)
@ImportRuntimeHints(DistributedLockRuntimeHints.class)
@Import({ RedlockBackendConfiguration.class, LettuceLockBackendConfiguration.class,
        SpringDataLockBackendConfiguration.class })
public class DistributedLockAutoConfiguration {

    // The backend configurations are imported, so their beans are registered before the
    // @ConditionalOnBean(LockBackend.class) below is evaluated, as are an application's
    // own beans.

    /** The threads waiting for a lock in this JVM, woken by hand-over messages. */
    @Bean
    @ConditionalOnBean(LockBackend.class)
    @ConditionalOnMissingBean
    public LockWaiters lockWaiters() {
        return new LockWaiters();
    }

    /** The one scheduler that renews every held lease. */
    @Bean(destroyMethod = "close")
    @ConditionalOnBean(LockBackend.class)
    @ConditionalOnMissingBean
    public LeaseWatchdog leaseWatchdog(LockBackend lockBackend, DistributedLockProperties properties) {
        return new LeaseWatchdog(lockBackend, properties.getWatchdog().getRenewalRatio());
    }

    /**
     * The lock service used by the annotation and injected by applications. Everything
     * that happens to a lock goes to the {@link LockListener} beans, in {@code @Order},
     * after the built-in ones: the lost-lease WARN and the {@link LockLostEvent}.
     */
    @Bean
    @ConditionalOnBean(LockBackend.class)
    @ConditionalOnMissingBean
    public LockService lockService(LockBackend lockBackend, LeaseWatchdog leaseWatchdog, LockWaiters lockWaiters,
            DistributedLockProperties properties, ApplicationEventPublisher eventPublisher,
            ObjectProvider<LockListener> lockListeners, ObjectProvider<NamedLockBackend> namedBackends) {
        RedlockProperties redlock = properties.getRedlock();
        LockDefaults defaults = new LockDefaults(properties.getDefaultTtl(), properties.getDefaultWaitTime(),
                properties.getWatchdog().isEnabled(), redlock.hasNodes() ? redlock.getRetryDelay() : null,
                properties.getMaxKeyLength());
        if (lockBackend instanceof HandOverNotifications notifications) {
            // A backend that announces hand-overs itself wakes the waiters itself.
            lockWaiters.notificationsFrom(notifications);
            notifications.deliverHandOversTo(lockWaiters);
        }
        List<LockListener> listeners = new ArrayList<>();
        listeners.add(new LockLostEventPublisher(eventPublisher));
        lockListeners.orderedStream().forEach(listeners::add);
        LockListener listener = LockListeners.of(listeners);
        String primaryName = LockBackendNames.of(lockBackend);
        DefaultLockService primary = new DefaultLockService(primaryName, lockBackend, leaseWatchdog, defaults,
                lockWaiters, listener);
        List<NamedLockBackend> named = namedBackends.orderedStream().toList();
        String defaultName = (properties.getBackend().isEmpty() ? primaryName : properties.getBackend());
        if (named.isEmpty() && defaultName.equals(primaryName)) {
            return primary;
        }
        return LockBackendNames.route(primaryName, primary, named, defaultName, properties, listener);
    }

    /**
     * The lock service of an application whose only stores are named ones (an etcd or
     * ZooKeeper module's, and no Redis): requests naming none go to
     * {@code distributed-lock.backend}, or to the one named backend if there is only one.
     */
    @Bean
    @ConditionalOnBean(NamedLockBackend.class)
    @ConditionalOnMissingBean({ LockBackend.class, LockService.class })
    public LockService namedBackendsLockService(DistributedLockProperties properties,
            ApplicationEventPublisher eventPublisher, ObjectProvider<LockListener> lockListeners,
            ObjectProvider<NamedLockBackend> namedBackends) {
        List<LockListener> listeners = new ArrayList<>();
        listeners.add(new LockLostEventPublisher(eventPublisher));
        lockListeners.orderedStream().forEach(listeners::add);
        return LockBackendNames.routeNamedOnly(namedBackends.orderedStream().toList(), properties,
                LockListeners.of(listeners));
    }

}
