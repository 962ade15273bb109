package io.github.distlock.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.actuate.DistributedLockActuatorAutoConfiguration;
import io.github.distlock.testsupport.RedisClusterExtension;

/**
 * The read-only key state and the health check on a real 3-master Redis Cluster, on both
 * drivers: the inspection script reads a lock's companion keys in its one slot, whichever
 * master owns it.
 */
class ClusterInspectionTest {

    @RegisterExtension
    static final RedisClusterExtension clusterExtension = new RedisClusterExtension();

    @ParameterizedTest
    @ValueSource(strings = { "lettuce", "jedis" })
    void keysOnEveryMasterAreInspectedAndTheClusterIsHealthy(String driver) {
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS,
                    DistributedLockAutoConfiguration.class, EndpointAutoConfiguration.class,
                    BootAutoConfigurations.HEALTH_CONTRIBUTOR, DistributedLockActuatorAutoConfiguration.class))
            .withPropertyValues(
                    "spring.data.redis.cluster.nodes=" + String.join(",", clusterExtension.cluster().hostAndPorts()),
                    "spring.data.redis.client-type=" + driver, "spring.data.redis.timeout=10s",
                    "management.endpoints.web.exposure.include=locks")
            .run(context -> {
                LockService locks = context.getBean(LockService.class);
                LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
                Supplier<HealthReading> health = HealthReading.of(context);
                await().atMost(Duration.ofSeconds(20)).until(() -> health.get().isUp());

                // Twelve names spread over the slots, so over all three masters.
                List<LockHandle> held = new ArrayList<>();
                try {
                    for (int i = 0; i < 12; i++) {
                        held.add(locks.lock(LockRequest.of("order:" + i).withTtl(Duration.ofSeconds(30))));
                    }
                    for (int i = 0; i < 12; i++) {
                        long fence = held.get(i).fencingToken();
                        LocksEndpoint.KeyState state = endpoint.lock("order:" + i);
                        assertThat(state.error()).isNull();
                        assertThat(state.held()).isTrue();
                        assertThat(state.pttlMillis()).isPositive().isLessThanOrEqualTo(30_000);
                        assertThat(state.queueLength()).isZero();
                        assertThat(state.lastFencingToken()).isEqualTo(fence);
                    }
                }
                finally {
                    held.forEach(LockHandle::release);
                }
                assertThat(endpoint.lock("order:3").held()).isFalse();
            });
    }

}
