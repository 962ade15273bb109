package io.github.distlock.actuate.boot4;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.health.registry.HealthContributorRegistry;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.ClassUtils;

import io.github.distlock.actuate.DistributedLockBoot4HealthIndicator;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.actuate.DistributedLockActuatorAutoConfiguration;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * The {@code distributedLock} health contributor on Spring Boot 4's health API, against a
 * real redis-server: registered under that name, up while Redis answers, down once it is
 * stopped and up again after it restarts, off by its switch, and replaced by the
 * application's own bean; Boot 3's contributor, in the same jar, is left out. Compiled
 * and run by the default (Boot 4.1) build only: a {@code boot4} package, which the boot3
 * profile leaves out, as it names Boot 4's health types.
 */
class DistributedLockBoot4HealthIndicatorTest {

    // resetBeforeEach: restarts the server that a test stopped.
    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private ApplicationContextRunner runner() {
        RedisTestServer redis = redisExtension.server();
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                    DistributedLockAutoConfiguration.class, EndpointAutoConfiguration.class,
                    HealthContributorAutoConfiguration.class, HealthContributorRegistryAutoConfiguration.class,
                    DistributedLockActuatorAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
                    "distributed-lock.operation-timeout=1s");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> redisNode(Health health) {
        RedisTestServer redis = redisExtension.server();
        return (Map<String, Object>) ((Map<String, Object>) health.getDetails().get("nodes"))
            .get(redis.host() + ":" + redis.port());
    }

    @Test
    void isRegisteredAsDistributedLockAndIsUpWhileRedisAnswersDownOnceItIsStoppedAndUpAfterItsRestart() {
        runner().run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(DistributedLockBoot4HealthIndicator.class);
            DistributedLockBoot4HealthIndicator indicator = context.getBean(DistributedLockBoot4HealthIndicator.class);
            assertThat(context.getBean(HealthContributorRegistry.class).getContributor("distributedLock"))
                .isSameAs(indicator);

            // Awaited: the first ping also makes the connection.
            await().atMost(Duration.ofSeconds(10)).until(() -> indicator.health().getStatus().equals(Status.UP));
            Health up = indicator.health();
            assertThat(up.getDetails()).containsEntry("backend", "LettuceLockBackend")
                .containsEntry("quorum", 1)
                .containsEntry("reachableNodes", 1);
            assertThat(redisNode(up)).containsEntry("reachable", true);

            RedisTestServer redis = redisExtension.server();
            redis.stop();
            Health down = indicator.health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat(down.getDetails()).containsEntry("reachableNodes", 0);
            assertThat(redisNode(down)).containsEntry("reachable", false).containsKey("error");

            redis.restart();
            await().atMost(Duration.ofSeconds(30)).until(() -> indicator.health().getStatus().equals(Status.UP));
        });
    }

    @Test
    void onBoot4OnlyBoot4sHealthContributorIsRegisteredThoughBoot3sConfigurationIsInTheJar() {
        // The jar holds both generations' configurations; Boot 3's is imported by name
        // too and must be left out
        // here without ever being read, as it names types that only Boot 3 has.
        String boot3Configuration = "io.github.distlock.autoconfigure.actuate.Boot3HealthConfiguration";
        assertThat(ClassUtils.isPresent(boot3Configuration, null)).isTrue();
        assertThat(ClassUtils.isPresent("org.springframework.boot.actuate.health.HealthIndicator", null))
            .as("Boot 3's health API is not on a Boot 4 class path")
            .isFalse();
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBeanDefinitionNames())
                .contains("io.github.distlock.autoconfigure.actuate.Boot4HealthConfiguration")
                .doesNotContain(boot3Configuration);
            assertThat(context).getBean("distributedLockHealthIndicator")
                .isExactlyInstanceOf(DistributedLockBoot4HealthIndicator.class);
        });
    }

    @Test
    void isLeftOutWhenSwitchedOff() {
        runner().withPropertyValues("management.health.distributed-lock.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(DistributedLockBoot4HealthIndicator.class);
            assertThat(context.getBean(HealthContributorRegistry.class).getContributor("distributedLock")).isNull();
        });
    }

    @Test
    void theApplicationsOwnIndicatorReplacesIt() {
        HealthIndicator own = () -> Health.up().withDetail("own", true).build();
        runner().withBean("distributedLockHealthIndicator", HealthIndicator.class, () -> own).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(DistributedLockBoot4HealthIndicator.class);
            assertThat(context.getBean(HealthContributorRegistry.class).getContributor("distributedLock"))
                .isSameAs(own);
        });
    }

}
