package io.github.distlock.autoconfigure.actuate;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportSelector;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.ClassUtils;

import io.github.distlock.LockService;
import io.github.distlock.actuate.LocksEndpoint;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.core.ActiveLocks;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.NamedLockBackend;
import io.github.distlock.core.RoutingLockService;

/**
 * The {@code locks} Actuator endpoint and the {@code distributedLock} health contributor,
 * in an application that has the Actuator and a {@link LockService}.
 *
 * <p>
 * The endpoint, and the {@link ActiveLocks} listener that feeds it, exist only when the
 * endpoint is available (enabled and exposed:
 * {@code management.endpoints.web.exposure.include=locks}), so an application that does
 * not expose it pays nothing per lock. The health contributor is on unless
 * {@code management.health.distributed-lock.enabled=false}.
 *
 * <p>
 * Spring Boot 4 moved the health API ({@code org.springframework.boot.health.*}): each
 * Boot generation's health contributor has a configuration class of its own
 * ({@code Boot3HealthConfiguration}, {@code Boot4HealthConfiguration}), imported by name
 * and guarded by a condition on that generation's classes, also by name, so this class
 * loads on either and exactly one of them applies.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
@ConditionalOnBean(LockService.class)
@Conditional(DistributedLockActuatorAutoConfiguration.OnLockBackendCondition.class)
@Import(DistributedLockActuatorAutoConfiguration.HealthConfigurationSelector.class)
public class DistributedLockActuatorAutoConfiguration {

    /** The endpoint, and the listener of this JVM's holders and waiters that it lists. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnAvailableEndpoint(endpoint = LocksEndpoint.class)
    static class LocksEndpointConfiguration {

        /**
         * Told of every lock by the lock service, like every {@code LockListener} bean.
         */
        @Bean
        @ConditionalOnMissingBean
        ActiveLocks activeLocks() {
            return new ActiveLocks();
        }

        @Bean
        @ConditionalOnMissingBean
        LocksEndpoint locksEndpoint(ActiveLocks activeLocks, LockService lockService,
                ObjectProvider<LockBackend> lockBackend, ObjectProvider<NamedLockBackend> namedBackends) {
            Map<String, LockBackend> backends = new LinkedHashMap<>();
            namedBackends.orderedStream().forEach((named) -> backends.put(named.name(), named.backend()));
            LockBackend primary = lockBackend.getIfUnique();
            String defaultName;
            if (lockService instanceof RoutingLockService routing) {
                defaultName = routing.defaultBackend();
                // The primary backend is the one name that no NamedLockBackend bean has.
                routing.backendNames()
                    .stream()
                    .filter((name) -> !backends.containsKey(name))
                    .findFirst()
                    .ifPresent((name) -> backends.put(name, Objects.requireNonNull(primary, name)));
            }
            else {
                defaultName = (lockService instanceof DefaultLockService single) ? single.backendName()
                        : DefaultLockService.DEFAULT_BACKEND;
                backends.putIfAbsent(defaultName, Objects.requireNonNull(primary, "the LockBackend bean"));
            }
            return new LocksEndpoint(activeLocks, backends, defaultName);
        }

    }

    /**
     * A {@code LockBackend} bean (Redis, Redlock, an application's own) or a
     * {@code NamedLockBackend} bean (etcd, ZooKeeper, ...): either is a store to show.
     */
    static final class OnLockBackendCondition extends AnyNestedCondition {

        OnLockBackendCondition() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnBean(LockBackend.class)
        static final class PrimaryBackend {

        }

        @ConditionalOnBean(NamedLockBackend.class)
        static final class NamedBackend {

        }

    }

    /**
     * Imports the health contributor of each Spring Boot generation whose configuration
     * class is there, by name only: this class never refers to a Boot-specific health
     * type, so a build for another generation can leave that generation's files out.
     */
    static final class HealthConfigurationSelector implements ImportSelector, BeanClassLoaderAware {

        private static final String[] CONFIGURATIONS = {
                "io.github.distlock.autoconfigure.actuate.Boot3HealthConfiguration",
                "io.github.distlock.autoconfigure.actuate.Boot4HealthConfiguration" };

        private ClassLoader classLoader;

        @Override
        public void setBeanClassLoader(ClassLoader classLoader) {
            this.classLoader = classLoader;
        }

        @Override
        public String[] selectImports(AnnotationMetadata metadata) {
            return Arrays.stream(CONFIGURATIONS)
                .filter(name -> ClassUtils.isPresent(name, classLoader))
                .toArray(String[]::new);
        }

    }

}
