package io.github.distlock.autoconfigure;

import java.util.Map;
import java.util.Set;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

import io.github.distlock.observation.LockAcquireObservationConvention;
import io.github.distlock.observation.LockHoldObservationConvention;
import io.github.distlock.observation.MeterTimingLockListener;
import io.micrometer.observation.GlobalObservationConvention;
import io.micrometer.observation.ObservationFilter;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationPredicate;
import io.micrometer.observation.ObservationRegistry;

/**
 * Matches when the lock observations could become nothing but the meters of Micrometer's
 * {@code DefaultMeterObservationHandler}, so that {@link MeterTimingLockListener} can
 * record those meters directly instead:
 * {@code distributed-lock.observation.direct-meters} is true or absent, no
 * {@link LockAcquireObservationConvention} or {@link LockHoldObservationConvention} bean,
 * and either no {@link ObservationRegistry} bean (the starter's own registry would hold
 * only that handler) or one that Spring Boot's {@code ObservationAutoConfiguration}
 * declared, with:
 * <ul>
 * <li>at least one {@link ObservationHandler} bean, each Boot's own
 * {@code DefaultMeterObservationHandler} (a tracer's handlers, or any other, need the
 * observations; a meter handler of the application's may record other meters);</li>
 * <li>no {@code ObservationRegistryCustomizer}, {@link GlobalObservationConvention},
 * {@link ObservationFilter} or {@link ObservationPredicate} bean besides Boot's own
 * properties filter, and no {@code management.observations.key-values.*} (they could add
 * tags or handlers the direct path would miss).</li>
 * </ul>
 * Boot's registry is required because its handlers are then exactly the handler beans:
 * Boot's post-processor adds those to any registry, but a registry the application built
 * itself may hold handlers no bean shows. Decided on bean definitions, before any bean
 * exists: a handler added later by code is not seen, and {@code direct-meters=false} is
 * the way out.
 */
class OnMetersOnlyObservationsCondition extends SpringBootCondition {

    static final String DIRECT_METERS = DistributedLockProperties.PREFIX + ".observation.direct-meters";

    private static final String DEFAULT_METER_HANDLER = "io.micrometer.core.instrument.observation."
            + "DefaultMeterObservationHandler";

    /**
     * Where Boot declares its {@code ObservationRegistry}: Boot 3's and Boot 4's
     * packages.
     */
    private static final Set<String> BOOT_OBSERVATION_AUTO_CONFIGURATIONS = Set.of(
            "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration");

    /**
     * Where Boot declares its {@code DefaultMeterObservationHandler}: on Boot 3 a nested
     * class of its observation auto-configuration, on Boot 4 its metrics
     * auto-configuration.
     */
    private static final Set<String> BOOT_METER_HANDLER_AUTO_CONFIGURATIONS = Set.of(
            "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration");

    private static final Set<String> BOOT_PROPERTIES_FILTERS = Set.of(
            "org.springframework.boot.actuate.autoconfigure.observation.PropertiesObservationFilterPredicate",
            "org.springframework.boot.micrometer.observation.autoconfigure.PropertiesObservationFilterPredicate");

    private static final Set<String> BOOT_REGISTRY_CUSTOMIZERS = Set.of(
            "org.springframework.boot.actuate.autoconfigure.observation.ObservationRegistryCustomizer",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationRegistryCustomizer");

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        ConditionMessage.Builder message = ConditionMessage.forCondition("MetersOnlyObservations");
        if (!Binder.get(context.getEnvironment()).bind(DIRECT_METERS, Boolean.class).orElse(true)) {
            return ConditionOutcome.noMatch(message.because(DIRECT_METERS + " is false"));
        }
        ConfigurableListableBeanFactory beans = context.getBeanFactory();
        if (has(beans, LockAcquireObservationConvention.class) || has(beans, LockHoldObservationConvention.class)) {
            return ConditionOutcome.noMatch(message.because("a lock observation convention bean is declared"));
        }
        String[] registries = beans.getBeanNamesForType(ObservationRegistry.class, true, false);
        if (registries.length == 0) {
            return ConditionOutcome.match(message.because("there is no ObservationRegistry: the starter's own would "
                    + "hold only the default meter handler"));
        }
        if (registries.length > 1 || !declaredBy(beans, registries[0], BOOT_OBSERVATION_AUTO_CONFIGURATIONS)) {
            return ConditionOutcome.noMatch(message
                .because("the ObservationRegistry is not Spring Boot's own, so " + "its handlers are not known"));
        }
        String[] handlers = beans.getBeanNamesForType(ObservationHandler.class, true, false);
        if (handlers.length == 0) {
            return ConditionOutcome.noMatch(message.because("there is no ObservationHandler bean"));
        }
        for (String handler : handlers) {
            Class<?> type = beans.getType(handler, false);
            // Boot's own bean, not merely its type: an application's
            // DefaultMeterObservationHandler (or subclass)
            // may feed another registry or tag differently.
            if (type == null || !type.getName().equals(DEFAULT_METER_HANDLER)
                    || !declaredBy(beans, handler, BOOT_METER_HANDLER_AUTO_CONFIGURATIONS)) {
                return ConditionOutcome.noMatch(message.because("the observation handler '" + handler + "' ("
                        + (type != null ? type.getName() : "unknown type") + ") is not the default meter handler"));
            }
        }
        for (Class<?> changer : new Class<?>[] { GlobalObservationConvention.class, ObservationFilter.class,
                ObservationPredicate.class }) {
            for (String name : beans.getBeanNamesForType(changer, true, false)) {
                Class<?> type = beans.getType(name, false);
                if (type == null || !BOOT_PROPERTIES_FILTERS.contains(type.getName())) {
                    return ConditionOutcome.noMatch(message.because(
                            "the " + changer.getSimpleName() + " bean '" + name + "' may change the observations"));
                }
            }
        }
        for (String customizer : BOOT_REGISTRY_CUSTOMIZERS) {
            if (ClassUtils.isPresent(customizer, context.getClassLoader())
                    && beans.getBeanNamesForType(ClassUtils.resolveClassName(customizer, context.getClassLoader()),
                            true, false).length > 0) {
                return ConditionOutcome
                    .noMatch(message.because("an ObservationRegistryCustomizer bean may add " + "handlers"));
            }
        }
        Map<String, String> keyValues = Binder.get(context.getEnvironment())
            .bind("management.observations.key-values", Bindable.mapOf(String.class, String.class))
            .orElse(Map.of());
        if (!keyValues.isEmpty()) {
            return ConditionOutcome.noMatch(message.because("management.observations.key-values adds tags"));
        }
        return ConditionOutcome.match(message.because(
                "the only observation handlers are default meter handlers " + "on Spring Boot's ObservationRegistry"));
    }

    private static boolean has(ConfigurableListableBeanFactory beans, Class<?> type) {
        return beans.getBeanNamesForType(type, true, false).length > 0;
    }

    /**
     * Whether the bean comes from a {@code @Bean} method of one of {@code configurations}
     * or their nested classes.
     */
    private static boolean declaredBy(ConfigurableListableBeanFactory beans, String name, Set<String> configurations) {
        if (!beans.containsBeanDefinition(name)) {
            // A singleton registered by hand: built by the application.
            return false;
        }
        BeanDefinition definition = beans.getBeanDefinition(name);
        String declaringClass = definition.getBeanClassName();
        String factoryBean = definition.getFactoryBeanName();
        if (factoryBean != null && beans.containsBeanDefinition(factoryBean)) {
            declaringClass = beans.getBeanDefinition(factoryBean).getBeanClassName();
        }
        if (declaringClass == null) {
            return false;
        }
        for (String boot : configurations) {
            // Declared by the class itself (Boot 3's registry, Boot 4's) or by one of its
            // nested classes (Boot 3's
            // meter handler).
            if (declaringClass.equals(boot) || declaringClass.startsWith(boot + "$")) {
                return true;
            }
        }
        return false;
    }

    /** The opposite: the observation path. */
    static class Not extends SpringBootCondition {

        private final OnMetersOnlyObservationsCondition condition = new OnMetersOnlyObservationsCondition();

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            ConditionOutcome outcome = condition.getMatchOutcome(context, metadata);
            return new ConditionOutcome(!outcome.isMatch(), outcome.getConditionMessage());
        }

    }

}
