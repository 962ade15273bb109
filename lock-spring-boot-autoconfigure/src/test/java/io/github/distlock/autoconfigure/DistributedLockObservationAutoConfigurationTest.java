package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.test.util.ReflectionTestUtils;

import io.github.distlock.LockService;
import io.github.distlock.core.LockListener;
import io.github.distlock.observation.DefaultLockAcquireObservationConvention;
import io.github.distlock.observation.DefaultLockHoldObservationConvention;
import io.github.distlock.observation.LockAcquireObservationConvention;
import io.github.distlock.observation.LockHoldObservationConvention;
import io.github.distlock.observation.MeterLockListener;
import io.github.distlock.observation.MeterTimingLockListener;
import io.github.distlock.observation.ObservationLockListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.GlobalObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationFilter;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationPredicate;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;

/**
 * Each condition of {@link DistributedLockObservationAutoConfiguration}. No Redis is
 * needed: the connection factory connects lazily. What the listeners record is
 * {@code io.github.distlock.observation.LockObservationTest}'s job.
 */
class DistributedLockObservationAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS, DistributedLockAutoConfiguration.class,
                DistributedLockObservationAutoConfiguration.class));

    @Test
    void withoutARegistryThereIsNoListener() {
        runner.run(context -> assertThat(context).hasNotFailed()
            .hasSingleBean(LockService.class)
            .doesNotHaveBean(ObservationLockListener.class)
            .doesNotHaveBean(MeterLockListener.class));
    }

    @Test
    void withoutMicrometerOnTheClassPathThereIsNoListener() {
        runner.withClassLoader(new FilteredClassLoader("io.micrometer"))
            .run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(LockService.class)
                .doesNotHaveBean(LockListener.class));
    }

    @Test
    void anObservationRegistryAloneGetsTheObservationsButNoCounters() {
        runner.withBean(ObservationRegistry.class, TestObservationRegistry::create).run(context -> {
            assertThat(context).hasSingleBean(ObservationLockListener.class).doesNotHaveBean(MeterLockListener.class);
            assertThat(registryOf(context.getBean(ObservationLockListener.class)))
                .isSameAs(context.getBean(ObservationRegistry.class));
        });
    }

    @Test
    void anObservationRegistryWithoutMicrometerCoreGetsTheObservations() {
        runner.withClassLoader(new FilteredClassLoader("io.micrometer.core"))
            .withBean(ObservationRegistry.class, TestObservationRegistry::create)
            .run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(ObservationLockListener.class)
                .doesNotHaveBean(MeterLockListener.class));
    }

    @Test
    void aMeterRegistryAloneGetsTheCountersAndTheTimersDirectly() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            assertThat(context).hasSingleBean(MeterLockListener.class)
                .hasSingleBean(MeterTimingLockListener.class)
                .doesNotHaveBean(ObservationLockListener.class)
                .doesNotHaveBean(ObservationRegistry.class);
            MeterTimingLockListener timers = context.getBean(MeterTimingLockListener.class);
            assertThat(ReflectionTestUtils.getField(timers, "registry")).isSameAs(context.getBean(MeterRegistry.class));
            assertThat(ReflectionTestUtils.getField(timers, "longTaskTimers")).isEqualTo(true);
        });
    }

    @Test
    void aMeterRegistryAloneWithAConventionGetsObservationsThatFeedOnlyIt() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withBean(LockHoldObservationConvention.class, DefaultLockHoldObservationConvention::new)
            .run(context -> {
                assertThat(context).hasSingleBean(MeterLockListener.class)
                    .hasSingleBean(ObservationLockListener.class)
                    .doesNotHaveBean(MeterTimingLockListener.class);
                ObservationRegistry own = registryOf(context.getBean(ObservationLockListener.class));
                assertThat(own.isNoop()).isFalse();
            });
    }

    @Test
    void aMeterRegistryAloneWithDirectMetersOffGetsObservationsThatFeedOnlyIt() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withPropertyValues("distributed-lock.observation.direct-meters=false")
            .run(context -> assertThat(context).hasSingleBean(ObservationLockListener.class)
                .doesNotHaveBean(MeterTimingLockListener.class));
    }

    @Test
    void bothRegistriesGetOneObservationListenerOnTheApplicationsRegistryAndTheCounters() {
        runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .run(context -> {
                assertThat(context).hasSingleBean(ObservationLockListener.class).hasSingleBean(MeterLockListener.class);
                assertThat(registryOf(context.getBean(ObservationLockListener.class)))
                    .isSameAs(context.getBean(ObservationRegistry.class));
            });
    }

    @Test
    void bootsOwnMicrometerAutoConfigurationComesFirstWhateverTheOrderGiven() {
        // Listed before Boot's, ours must still see the registries and handlers Boot's
        // configurations declare.
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DistributedLockObservationAutoConfiguration.class,
                    DistributedLockAutoConfiguration.class, BootAutoConfigurations.REDIS,
                    BootAutoConfigurations.OBSERVATION, BootAutoConfigurations.METRICS,
                    BootAutoConfigurations.COMPOSITE_METER_REGISTRY, BootAutoConfigurations.SIMPLE_METRICS_EXPORT))
            .run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(MeterTimingLockListener.class)
                .hasSingleBean(MeterLockListener.class)
                .doesNotHaveBean(ObservationLockListener.class));
    }

    @Test
    void bootsRegistryWithOnlyTheDefaultMeterHandlerGetsTheTimersDirectlyAndNoObservations() {
        actuator().run(context -> {
            assertThat(context).hasNotFailed()
                .hasSingleBean(MeterTimingLockListener.class)
                .hasSingleBean(MeterLockListener.class)
                .doesNotHaveBean(ObservationLockListener.class);
            MeterTimingLockListener timers = context.getBean(MeterTimingLockListener.class);
            assertThat(ReflectionTestUtils.getField(timers, "longTaskTimers")).isEqualTo(true);
            assertThat(ReflectionTestUtils.getField(timers, "timeAcquisitions")).isEqualTo(true);
            assertThat(ReflectionTestUtils.getField(timers, "timeHolds")).isEqualTo(true);
        });
    }

    @Test
    void bootsLongTaskTimerSwitchAndObservationSwitchApplyToTheDirectTimers() {
        actuator()
            .withPropertyValues(BootAutoConfigurations.longTaskTimersOff(),
                    "management.observations.enable.distributed.lock.hold=false")
            .run(context -> {
                MeterTimingLockListener timers = context.getBean(MeterTimingLockListener.class);
                assertThat(ReflectionTestUtils.getField(timers, "longTaskTimers")).isEqualTo(false);
                assertThat(ReflectionTestUtils.getField(timers, "timeAcquisitions")).isEqualTo(true);
                assertThat(ReflectionTestUtils.getField(timers, "timeHolds")).isEqualTo(false);
            });
    }

    @Test
    void directMetersFalseKeepsTheObservationsOnBootsRegistry() {
        actuator().withPropertyValues("distributed-lock.observation.direct-meters=false")
            .run(context -> assertObservationsOnTheApplicationsRegistry(context));
    }

    @Test
    void anAcquireConventionBeanKeepsTheObservations() {
        actuator().withBean(LockAcquireObservationConvention.class, DefaultLockAcquireObservationConvention::new)
            .run(context -> assertObservationsOnTheApplicationsRegistry(context));
    }

    @Test
    void aHoldConventionBeanKeepsTheObservations() {
        actuator().withBean(LockHoldObservationConvention.class, DefaultLockHoldObservationConvention::new)
            .run(context -> assertObservationsOnTheApplicationsRegistry(context));
    }

    @Test
    void aHandlerBeanOtherThanTheDefaultMeterHandlerKeepsTheObservations() {
        // What a tracer brings: a handler that is not a meter handler.
        actuator().withBean("tracingLike", ObservationHandler.class, () -> context -> true)
            .run(context -> assertObservationsOnTheApplicationsRegistry(context));
    }

    @Test
    void aMeterHandlerOfTheApplicationsOwnKeepsTheObservations() {
        // It may record other meters than the direct path would. Named apart from Boot's
        // handler bean: Boot 3 backs
        // off for it, Boot 4 keeps both, and a bean of the same name would be an illegal
        // override on Boot 4.
        actuator().withBean("ownMeterHandler", DefaultMeterObservationHandler.class, OwnMeterHandler::new)
            .run(context -> assertObservationsOnTheApplicationsRegistry(context));
    }

    @Test
    void anObservationFilterBeanKeepsTheObservations() {
        actuator().withBean(ObservationFilter.class, () -> observationContext -> observationContext)
            .run(context -> assertObservationsOnTheApplicationsRegistry(context));
    }

    @Test
    void anObservationPredicateBeanKeepsTheObservations() {
        actuator().withBean(ObservationPredicate.class, () -> (name, observationContext) -> true)
            .run(context -> assertObservationsOnTheApplicationsRegistry(context));
    }

    @Test
    void aGlobalObservationConventionBeanKeepsTheObservations() {
        actuator().withBean(GlobalObservationConvention.class, () -> new GlobalObservationConvention<>() {
            @Override
            public boolean supportsContext(Observation.Context observationContext) {
                return true;
            }
        }).run(context -> assertObservationsOnTheApplicationsRegistry(context));
    }

    @Test
    void anObservationRegistryCustomizerBeanKeepsTheObservations() {
        actuator().withBean(customizerType(), DistributedLockObservationAutoConfigurationTest::doNothingCustomizer)
            .run(context -> assertObservationsOnTheApplicationsRegistry(context));
    }

    @Test
    void commonKeyValuesKeepTheObservations() {
        actuator().withPropertyValues("management.observations.key-values.region=eu")
            .run(context -> assertObservationsOnTheApplicationsRegistry(context));
    }

    @Test
    void anObservationRegistryOfTheApplicationsOwnKeepsTheObservationsEvenWithOnlyMeterHandlerBeans() {
        // Its handlers may include some no bean shows; Boot's post-processor adds the
        // bean handlers to it too.
        actuator().withBean(ObservationRegistry.class, ObservationRegistry::create)
            .run(context -> assertObservationsOnTheApplicationsRegistry(context));
    }

    @Test
    void eitherTimingListenerOfTheApplicationReplacesBothOfOurs() {
        // Whichever path ours would take, an application's listener of either kind is the
        // only one: never two.
        ObservationLockListener ownObservations = new ObservationLockListener(ObservationRegistry.NOOP, null, null);
        actuator().withBean("ownObservations", ObservationLockListener.class, () -> ownObservations).run(context -> {
            assertThat(context).doesNotHaveBean(MeterTimingLockListener.class).hasSingleBean(MeterLockListener.class);
            assertThat(context.getBean(ObservationLockListener.class)).isSameAs(ownObservations);
        });
        MeterTimingLockListener ownTimers = new MeterTimingLockListener(new SimpleMeterRegistry(), null, true);
        actuator().withPropertyValues("distributed-lock.observation.direct-meters=false")
            .withBean("ownTimers", MeterTimingLockListener.class, () -> ownTimers)
            .run(context -> {
                assertThat(context).doesNotHaveBean(ObservationLockListener.class);
                assertThat(context.getBean(MeterTimingLockListener.class)).isSameAs(ownTimers);
            });
    }

    private ApplicationContextRunner actuator() {
        return runner
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.OBSERVATION, BootAutoConfigurations.METRICS,
                    BootAutoConfigurations.COMPOSITE_METER_REGISTRY, BootAutoConfigurations.SIMPLE_METRICS_EXPORT));
    }

    private static void assertObservationsOnTheApplicationsRegistry(AssertableApplicationContext context) {
        assertThat(context).hasNotFailed()
            .hasSingleBean(ObservationLockListener.class)
            .hasSingleBean(MeterLockListener.class)
            .doesNotHaveBean(MeterTimingLockListener.class);
        assertThat(registryOf(context.getBean(ObservationLockListener.class)))
            .isSameAs(context.getBean(ObservationRegistry.class));
    }

    /** A meter handler an application declares in place of Boot's. */
    static class OwnMeterHandler extends DefaultMeterObservationHandler {

        OwnMeterHandler() {
            super(new SimpleMeterRegistry());
        }

    }

    @Test
    void conventionBeansReplaceTheDefaults() {
        LockAcquireObservationConvention acquire = new DefaultLockAcquireObservationConvention();
        LockHoldObservationConvention hold = new DefaultLockHoldObservationConvention();
        runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
            .withBean(LockAcquireObservationConvention.class, () -> acquire)
            .withBean(LockHoldObservationConvention.class, () -> hold)
            .run(context -> {
                ObservationLockListener listener = context.getBean(ObservationLockListener.class);
                assertThat(ReflectionTestUtils.getField(listener, "customAcquireConvention")).isSameAs(acquire);
                assertThat(ReflectionTestUtils.getField(listener, "customHoldConvention")).isSameAs(hold);
            });
    }

    @Test
    void listenerBeansOfTheApplicationReplaceOurs() {
        ObservationLockListener own = new ObservationLockListener(ObservationRegistry.NOOP, null, null);
        MeterLockListener ownCounters = new MeterLockListener(new SimpleMeterRegistry());
        runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withBean("ownObservations", ObservationLockListener.class, () -> own)
            .withBean("ownCounters", MeterLockListener.class, () -> ownCounters)
            .run(context -> {
                assertThat(context.getBean(ObservationLockListener.class)).isSameAs(own);
                assertThat(context.getBean(MeterLockListener.class)).isSameAs(ownCounters);
            });
    }

    @Test
    void thePropertyTurnsItOff() {
        runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withPropertyValues("distributed-lock.observation.enabled=false")
            .run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(LockService.class)
                .doesNotHaveBean(ObservationLockListener.class)
                .doesNotHaveBean(MeterLockListener.class));
    }

    @Test
    void withoutALockServiceThereIsNoListener() {
        runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withPropertyValues("distributed-lock.enabled=false")
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockService.class)
                .doesNotHaveBean(ObservationLockListener.class)
                .doesNotHaveBean(MeterLockListener.class));
    }

    private static ObservationRegistry registryOf(ObservationLockListener listener) {
        return (ObservationRegistry) ReflectionTestUtils.getField(listener, "registry");
    }

    /**
     * Boot's {@code ObservationRegistryCustomizer}, whose package differs between Boot 3
     * and Boot 4.
     */
    @SuppressWarnings("unchecked")
    private static Class<Object> customizerType() {
        return (Class<Object>) BootAutoConfigurations.OBSERVATION_REGISTRY_CUSTOMIZER;
    }

    /**
     * A customizer that changes nothing, as {@code registry -> { }} would be with the
     * type at hand.
     */
    private static Object doNothingCustomizer() {
        Class<?> type = BootAutoConfigurations.OBSERVATION_REGISTRY_CUSTOMIZER;
        return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] { type }, (proxy, method, args) -> {
            return switch (method.getName()) {
                case "equals" -> proxy == args[0];
                case "hashCode" -> System.identityHashCode(proxy);
                case "toString" -> "doNothingCustomizer";
                default -> null;
            };
        });
    }

}
