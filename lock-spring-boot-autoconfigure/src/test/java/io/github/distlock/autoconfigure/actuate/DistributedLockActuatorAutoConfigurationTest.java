package io.github.distlock.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.actuate.LocksEndpoint;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.core.ActiveLocks;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.NamedLockBackend;
import io.github.distlock.memory.InMemoryLockBackend;

/**
 * Each condition of {@link DistributedLockActuatorAutoConfiguration}, on either Boot
 * line. No Redis is needed: the connection factory connects lazily and nothing here takes
 * a lock. Which class the health contributor is on each line, and that the other line's
 * configuration is left out, is tested per line ({@code boot3} and {@code boot4}
 * packages).
 */
class DistributedLockActuatorAutoConfigurationTest {

    private static final String HEALTH_INDICATOR = "distributedLockHealthIndicator";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS, DistributedLockAutoConfiguration.class,
                EndpointAutoConfiguration.class, BootAutoConfigurations.HEALTH_CONTRIBUTOR,
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
            assertThat(context).hasNotFailed().hasBean(HEALTH_INDICATOR);
            assertThat(context.getBeansOfType(BootAutoConfigurations.HEALTH_INDICATOR)).containsKey(HEALTH_INDICATOR);
        });
    }

    @Test
    void theHealthIndicatorCanBeTurnedOff() {
        runner.withPropertyValues("management.health.distributed-lock.enabled=false")
            .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(HEALTH_INDICATOR));
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
                .doesNotHaveBean(HEALTH_INDICATOR));
    }

    @Test
    void nothingIsRegisteredWithoutTheActuator() {
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS,
                    DistributedLockAutoConfiguration.class, DistributedLockActuatorAutoConfiguration.class))
            .withClassLoader(new FilteredClassLoader(Endpoint.class))
            .withPropertyValues("spring.data.redis.port=1", "management.endpoints.web.exposure.include=locks")
            .run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(LockService.class)
                .doesNotHaveBean(LocksEndpoint.class)
                .doesNotHaveBean(ActiveLocks.class)
                .doesNotHaveBean(HEALTH_INDICATOR));
    }

    @Test
    void theApplicationsOwnBeansReplaceOurs() {
        runner.withUserConfiguration(OwnBeans.class)
            .withPropertyValues("management.endpoints.web.exposure.include=locks")
            .run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(LocksEndpoint.class)).isSameAs(context.getBean(OwnBeans.class).endpoint);
                assertThat(context.getBean(ActiveLocks.class)).isSameAs(context.getBean(OwnBeans.class).active);
            });
    }

    @Test
    void anApplicationWhoseOnlyStoreIsANamedOneGetsTheEndpointOverItAndItsHealthCheck() {
        new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(DistributedLockAutoConfiguration.class, EndpointAutoConfiguration.class,
                            BootAutoConfigurations.HEALTH_CONTRIBUTOR, DistributedLockActuatorAutoConfiguration.class))
            .withUserConfiguration(MemoryOnly.class)
            .withPropertyValues("management.endpoints.web.exposure.include=locks")
            .run(context -> {
                assertThat(context).hasNotFailed().doesNotHaveBean(LockBackend.class).hasBean(HEALTH_INDICATOR);
                LockService locks = context.getBean(LockService.class);
                LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
                try (LockHandle held = locks.lock(LockRequest.of("ledger:1"))) {
                    LocksEndpoint.KeyState state = endpoint.lock("ledger:1");
                    assertThat(state.backend()).isEqualTo("memory");
                    assertThat(state.held()).isTrue();
                    assertThat(state.heldHere()).singleElement()
                        .satisfies((holder) -> assertThat(holder.backend()).isEqualTo("memory"));
                }
                assertThat(endpoint.lock("ledger:1").held()).isFalse();
            });
    }

    @Test
    void theEndpointInspectsAKeyInTheDefaultBackendAndInEachNamedOneThatHoldsIt() {
        runner.withUserConfiguration(MemoryOnly.class)
            .withPropertyValues("management.endpoints.web.exposure.include=locks")
            .run(context -> {
                assertThat(context).hasNotFailed();
                LockService locks = context.getBean(LockService.class);
                LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
                try (LockHandle held = locks.lock(LockRequest.of("ledger:2").withBackend("memory"))) {
                    LocksEndpoint.KeyState state = endpoint.lock("ledger:2");
                    // The default store (Redis on port 1) cannot be asked; the named one
                    // holds it.
                    assertThat(state.backend()).isEqualTo("redis");
                    assertThat(state.held()).isNull();
                    assertThat(state.error()).isNotBlank();
                    assertThat(state.otherBackends()).singleElement().satisfies((there) -> {
                        assertThat(there.backend()).isEqualTo("memory");
                        assertThat(there.held()).isTrue();
                        assertThat(there.pttlMillis()).isPositive();
                    });
                }
                assertThat(endpoint.lock("ledger:2").otherBackends()).as("a named store that holds nothing is left out")
                    .isEmpty();
            });
    }

    /**
     * An in-memory store contributed under a name, as the etcd and ZooKeeper modules do.
     */
    @Configuration(proxyBeanMethods = false)
    static class MemoryOnly {

        @Bean
        NamedLockBackend memoryLockBackend() {
            return new NamedLockBackend("memory", new InMemoryLockBackend());
        }

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

    }

}
