package io.github.distlock.autoconfigure.actuate.boot3;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.ClassUtils;

import io.github.distlock.actuate.DistributedLockHealthIndicator;
import io.github.distlock.actuate.LocksEndpoint;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.actuate.DistributedLockActuatorAutoConfiguration;

/**
 * The health contributor on Spring Boot 3.5: Boot 3's
 * {@link DistributedLockHealthIndicator}, compiled by the default (Boot 4.1) build
 * against Boot 3.5's health API, is the one registered, and Boot 4's configuration, in
 * the same jar, is left out. Compiled and run by the boot3 profile only (a {@code boot3}
 * package): it names Boot 3's health types. No Redis is needed: the connection factory
 * connects lazily and nothing here takes a lock.
 */
class Boot3HealthConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class, DistributedLockAutoConfiguration.class,
                EndpointAutoConfiguration.class, HealthContributorAutoConfiguration.class,
                DistributedLockActuatorAutoConfiguration.class))
        // Nothing here connects; port 1 makes sure the background connect never reaches a
        // real Redis.
        .withPropertyValues("spring.data.redis.port=1");

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
    void theHealthIndicatorCanBeTurnedOff() {
        runner.withPropertyValues("management.health.distributed-lock.enabled=false")
            .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DistributedLockHealthIndicator.class));
    }

    @Test
    void theHealthIndicatorIsLeftOutWhereBoot3sHealthApiIsMissing() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate.health."))
            .withPropertyValues("management.endpoints.web.exposure.include=locks")
            .run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(LocksEndpoint.class)
                .doesNotHaveBean("distributedLockHealthIndicator"));
    }

    @Test
    void theApplicationsOwnIndicatorReplacesIt() {
        HealthIndicator own = () -> Health.up().withDetail("own", true).build();
        runner.withBean("distributedLockHealthIndicator", HealthIndicator.class, () -> own).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(DistributedLockHealthIndicator.class);
            assertThat(context.getBean("distributedLockHealthIndicator")).isSameAs(own);
        });
    }

}
