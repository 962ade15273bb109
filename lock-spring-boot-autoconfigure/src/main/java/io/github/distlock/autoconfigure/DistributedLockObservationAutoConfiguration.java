package io.github.distlock.autoconfigure;

import java.util.Locale;
import java.util.Set;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import io.github.distlock.LockService;
import io.github.distlock.core.LockListener;
import io.github.distlock.observation.LockAcquireObservationConvention;
import io.github.distlock.observation.LockHoldObservationConvention;
import io.github.distlock.observation.MeterLockListener;
import io.github.distlock.observation.MeterTimingLockListener;
import io.github.distlock.observation.ObservationLockListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.observation.ObservationRegistry;

/**
 * Lock metrics and traces through Micrometer, as {@link LockListener} beans that the
 * {@link LockService} calls.
 *
 * <ul>
 * <li>With an {@link ObservationRegistry} bean (Spring Boot's Actuator provides one): an
 * {@link ObservationLockListener} observing acquisitions and holds on it. Its handlers
 * decide what they become: timers and long-task timers with Boot's meter handler, spans
 * with a tracer. When Boot's meter handler is all there is, a
 * {@link MeterTimingLockListener} records those same timers directly instead, much
 * cheaper ({@link OnMetersOnlyObservationsCondition};
 * {@code distributed-lock.observation.direct-meters=false} keeps the observations).</li>
 * <li>With a {@link MeterRegistry} bean: a {@link MeterLockListener} counting hand-overs,
 * renewals, lost leases and releases. Without an {@code ObservationRegistry} bean, the
 * timers are recorded directly (or, with a convention bean or
 * {@code direct-meters=false}, through observations on a registry of the starter's own
 * that only feeds that {@code MeterRegistry}), so the timers exist either way.</li>
 * <li>With neither, or without Micrometer on the class path: nothing.</li>
 * </ul>
 *
 * Off with {@code distributed-lock.observation.enabled=false}. Beans of the application's
 * own replace the listeners, and a {@link LockAcquireObservationConvention} or
 * {@link LockHoldObservationConvention} bean replaces the default names and tags:
 *
 * <pre>{@code
 * &#64;Bean
 * LockHoldObservationConvention holdConvention() {
 *     return new DefaultLockHoldObservationConvention() { ... };
 * }
 * }</pre>
 *
 * Ordered after Boot's own Micrometer auto-configuration, whose classes moved between
 * Boot 3 and Boot 4: both names are given, so the same jar orders itself correctly on
 * either.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class,
        afterName = { "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
                "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
                "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
                "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnClass(name = "io.micrometer.observation.ObservationRegistry")
@ConditionalOnBean(LockService.class)
@ConditionalOnProperty(prefix = DistributedLockProperties.PREFIX + ".observation", name = "enabled",
        havingValue = "true", matchIfMissing = true)
public class DistributedLockObservationAutoConfiguration {

    /**
     * Boot 3's switch of the meter handler's long-task timers, honoured by the direct
     * path too.
     */
    static final String LONG_TASK_TIMERS = "management.observations.long-task-timer.enabled";

    /**
     * Boot 4's: the meters its {@code DefaultMeterObservationHandler} leaves out
     * ({@code long-task-timer}).
     */
    static final String IGNORED_METERS = "management.metrics.observations.ignored-meters";

    /**
     * A class that only Boot 4 has, next to the handler that reads
     * {@link #IGNORED_METERS}.
     */
    private static final String BOOT4_METRICS_PROPERTIES = "org.springframework.boot.micrometer.metrics.autoconfigure."
            + "MetricsProperties";

    /**
     * Observations on the application's {@link ObservationRegistry}, unless they could
     * only become the meters of Micrometer's default meter handler
     * ({@link OnMetersOnlyObservationsCondition}): then {@link MeterConfiguration}
     * records those meters directly instead, and this listener is not created, so that no
     * meter is recorded twice.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(ObservationRegistry.class)
    static class ObservationConfiguration {

        @Bean
        @ConditionalOnMissingBean({ ObservationLockListener.class, MeterTimingLockListener.class })
        @Conditional(OnMetersOnlyObservationsCondition.Not.class)
        ObservationLockListener observationLockListener(ObservationRegistry observationRegistry,
                ObjectProvider<LockAcquireObservationConvention> acquireConvention,
                ObjectProvider<LockHoldObservationConvention> holdConvention) {
            return new ObservationLockListener(observationRegistry, acquireConvention.getIfUnique(),
                    holdConvention.getIfUnique());
        }

    }

    /**
     * Counters on the application's {@link MeterRegistry}, and the timers too: directly
     * when observations could only become meters (why: the observation machinery is most
     * of the instrumentation's cost, see {@link MeterTimingLockListener}), else through
     * observations on a registry of the starter's own when the application has no
     * {@code ObservationRegistry}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    @ConditionalOnBean(type = "io.micrometer.core.instrument.MeterRegistry")
    static class MeterConfiguration {

        @Bean
        @ConditionalOnMissingBean
        MeterLockListener meterLockListener(MeterRegistry meterRegistry) {
            return new MeterLockListener(meterRegistry);
        }

        /**
         * The timers without observations. With Boot's {@code ObservationRegistry}, its
         * predicates ({@code management.observations.enable.*}) and its long-task timer
         * switch still apply; without one, the meters are those the starter's own
         * registry would have produced.
         */
        @Bean
        @ConditionalOnMissingBean({ ObservationLockListener.class, MeterTimingLockListener.class })
        @Conditional(OnMetersOnlyObservationsCondition.class)
        MeterTimingLockListener meterTimingLockListener(MeterRegistry meterRegistry,
                ObjectProvider<ObservationRegistry> observationRegistry, Environment environment) {
            ObservationRegistry registry = observationRegistry.getIfUnique();
            boolean longTaskTimers = registry == null || bootsHandlerRecordsLongTaskTimers(environment);
            return new MeterTimingLockListener(meterRegistry, registry, longTaskTimers);
        }

        /**
         * Whether Boot's meter handler would record long-task timers: each Boot line has
         * its own property.
         */
        private static boolean bootsHandlerRecordsLongTaskTimers(Environment environment) {
            if (!ClassUtils.isPresent(BOOT4_METRICS_PROPERTIES, MeterConfiguration.class.getClassLoader())) {
                return environment.getProperty(LONG_TASK_TIMERS, Boolean.class, Boolean.TRUE);
            }
            // Bound as Boot binds the enum: long-task-timer, LONG_TASK_TIMER and
            // longTaskTimer are the same value.
            return Binder.get(environment)
                .bind(IGNORED_METERS, Bindable.setOf(String.class))
                .orElse(Set.of())
                .stream()
                .map(name -> name.replace("-", "").replace("_", "").toUpperCase(Locale.ROOT))
                .noneMatch("LONGTASKTIMER"::equals);
        }

        /**
         * A MeterRegistry without an ObservationRegistry, and a convention bean or
         * {@code direct-meters=false}: the observations then feed only that registry,
         * through the handler Boot would have installed.
         */
        @Bean
        @ConditionalOnMissingBean({ ObservationRegistry.class, ObservationLockListener.class,
                MeterTimingLockListener.class })
        @Conditional(OnMetersOnlyObservationsCondition.Not.class)
        ObservationLockListener meterObservationLockListener(MeterRegistry meterRegistry,
                ObjectProvider<LockAcquireObservationConvention> acquireConvention,
                ObjectProvider<LockHoldObservationConvention> holdConvention) {
            ObservationRegistry ownRegistry = ObservationRegistry.create();
            ownRegistry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meterRegistry));
            return new ObservationLockListener(ownRegistry, acquireConvention.getIfUnique(),
                    holdConvention.getIfUnique());
        }

    }

}
