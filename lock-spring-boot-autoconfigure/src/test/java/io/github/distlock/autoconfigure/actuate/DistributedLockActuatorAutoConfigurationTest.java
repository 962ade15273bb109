package io.github.distlock.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

import io.github.distlock.LockService;
import io.github.distlock.actuate.DistributedLockHealthIndicator;
import io.github.distlock.actuate.LocksEndpoint;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.core.ActiveLocks;
import io.github.distlock.core.LockBackend;

/**
 * Each condition of {@link DistributedLockActuatorAutoConfiguration}. No Redis is needed:
 * the connection factory connects lazily and nothing here takes a lock.
 */
class DistributedLockActuatorAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class, DistributedLockAutoConfiguration.class,
                EndpointAutoConfiguration.class, HealthContributorAutoConfiguration.class,
                DistributedLockActuatorAutoConfiguration.class))
        // Nothing here connects; port 1 makes sure the background connect never reaches a
        // real Redis.
        .withPropertyValues("spring.data.redis.port=1");

    @Test
    void theEndpointAndItsListenerExistOnlyWhenTheEndpointIsExposed() {
        runner.run(context -> assertThat(context).hasNotFailed()
            .doesNotHaveBean(LocksEndpoint.class)
            .doesNotHaveBean(ActiveLocks.class));
        runner.withPropertyValues("management.endpoints.web.exposure.include=locks")
            .run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(LocksEndpoint.class)
                .hasSingleBean(ActiveLocks.class));
    }

    @Test
    void aDisabledEndpointIsNotCreatedEvenWhenExposed() {
        runner
            .withPropertyValues("management.endpoints.web.exposure.include=locks",
                    "management.endpoint.locks.access=NONE")
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LocksEndpoint.class)
                .doesNotHaveBean(ActiveLocks.class));
    }

    @Test
    void theHealthIndicatorIsOnByDefaultAsDistributedLock() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(DistributedLockHealthIndicator.class);
            assertThat(context.getBeansOfType(HealthIndicator.class)).containsKey("distributedLockHealthIndicator");
        });
    }

    @Test
    void theHealthIndicatorCanBeTurnedOff() {
        runner.withPropertyValues("management.health.distributed-lock.enabled=false")
            .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DistributedLockHealthIndicator.class));
    }

    @Test
    void theHealthSwitchHasMetadataForTheIde() throws Exception {
        try (java.io.InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            String metadata = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(metadata).contains("\"management.health.distributed-lock.enabled\"");
        }
    }

    @Test
    void nothingIsRegisteredWithoutALockService() {
        runner.withPropertyValues("distributed-lock.enabled=false", "management.endpoints.web.exposure.include=locks")
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockService.class)
                .doesNotHaveBean(LocksEndpoint.class)
                .doesNotHaveBean(ActiveLocks.class)
                .doesNotHaveBean(DistributedLockHealthIndicator.class));
    }

    @Test
    void nothingIsRegisteredWithoutTheActuator() {
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class,
                    DistributedLockAutoConfiguration.class, DistributedLockActuatorAutoConfiguration.class))
            .withClassLoader(new FilteredClassLoader(Endpoint.class))
            .withPropertyValues("spring.data.redis.port=1", "management.endpoints.web.exposure.include=locks")
            .run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(LockService.class)
                .doesNotHaveBean(LocksEndpoint.class)
                .doesNotHaveBean(ActiveLocks.class)
                .doesNotHaveBean(DistributedLockHealthIndicator.class));
    }

    @Test
    void theHealthIndicatorIsLeftOutWhereBoot3sHealthApiIsMissingAsOnBoot4() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate.health."))
            .withPropertyValues("management.endpoints.web.exposure.include=locks")
            .run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(LocksEndpoint.class)
                .doesNotHaveBean(DistributedLockHealthIndicator.class));
    }

    @Test
    void onBoot3OnlyBoot3sHealthContributorIsRegisteredThoughBoot4sConfigurationIsInTheJar() {
        // The jar holds both generations' configurations; Boot 4's is imported by name
        // too and must be left out
        // here without ever being loaded, as it names types that only Boot 4 has.
        String boot4Configuration = "io.github.distlock.autoconfigure.actuate.Boot4HealthConfiguration";
        assertThat(ClassUtils.isPresent(boot4Configuration, null)).isTrue();
        assertThat(ClassUtils.isPresent("org.springframework.boot.health.contributor.HealthIndicator", null))
            .as("Boot 4's health API is kept off the Boot 3 tests' class path, as in a Boot 3 application")
            .isFalse();
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBeanDefinitionNames())
                .contains("io.github.distlock.autoconfigure.actuate.Boot3HealthConfiguration")
                .doesNotContain(boot4Configuration);
            assertThat(context.getBeansOfType(HealthIndicator.class)).containsKey("distributedLockHealthIndicator");
            assertThat(context).getBean("distributedLockHealthIndicator")
                .isExactlyInstanceOf(DistributedLockHealthIndicator.class);
        });
    }

    @Test
    void theApplicationsOwnBeansReplaceOurs() {
        runner.withUserConfiguration(OwnBeans.class)
            .withPropertyValues("management.endpoints.web.exposure.include=locks")
            .run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(LocksEndpoint.class)).isSameAs(context.getBean(OwnBeans.class).endpoint);
                assertThat(context.getBean(ActiveLocks.class)).isSameAs(context.getBean(OwnBeans.class).active);
                assertThat(context).getBean("distributedLockHealthIndicator")
                    .isNotInstanceOf(DistributedLockHealthIndicator.class);
            });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBeans {

        final ActiveLocks active = new ActiveLocks();

        LocksEndpoint endpoint;

        @Bean
        ActiveLocks myActiveLocks() {
            return active;
        }

        @Bean
        LocksEndpoint myLocksEndpoint(LockBackend backend) {
            endpoint = new LocksEndpoint(active, backend);
            return endpoint;
        }

        @Bean
        HealthIndicator distributedLockHealthIndicator() {
            return () -> org.springframework.boot.actuate.health.Health.up().build();
        }

    }

}
