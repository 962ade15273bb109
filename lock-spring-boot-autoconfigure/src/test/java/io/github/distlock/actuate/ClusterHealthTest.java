package io.github.distlock.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.actuate.DistributedLockActuatorAutoConfiguration;
import io.github.distlock.testsupport.RedisClusterExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * The health check on a real 3-master Redis Cluster, on both drivers: every master is
 * pinged and shown by its address, and one master that does not answer makes the whole
 * check down (its share of the locks fails), with that master's error in plain words.
 */
class ClusterHealthTest {

    @RegisterExtension
    static final RedisClusterExtension clusterExtension = new RedisClusterExtension();

    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> nodes(HealthReading health) {
        return (Map<String, Map<String, Object>>) health.details().get("nodes");
    }

    private static String address(RedisTestServer node) {
        return node.host() + ":" + node.port();
    }

    @ParameterizedTest
    @ValueSource(strings = { "lettuce", "jedis" })
    void everyMasterIsShownByItsAddressAndOneThatDoesNotAnswerMakesTheCheckDown(String driver) {
        List<RedisTestServer> masters = clusterExtension.cluster().masters();
        String seeds = String.join(",", clusterExtension.cluster().hostAndPorts());
        String[] addresses = masters.stream().map(ClusterHealthTest::address).toArray(String[]::new);
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS,
                    DistributedLockAutoConfiguration.class, EndpointAutoConfiguration.class,
                    BootAutoConfigurations.HEALTH_CONTRIBUTOR, DistributedLockActuatorAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.cluster.nodes=" + seeds, "spring.data.redis.client-type=" + driver,
                    "spring.data.redis.timeout=5s", "distributed-lock.operation-timeout=1s")
            .run(context -> {
                Supplier<HealthReading> indicator = HealthReading.of(context);
                HealthReading up = await().atMost(Duration.ofSeconds(20)).until(indicator::get, HealthReading::isUp);
                assertThat(nodes(up)).containsOnlyKeys(addresses)
                    .allSatisfy((address, node) -> assertThat(node).containsEntry("reachable", true)
                        .containsKey("latencyMillis")
                        .doesNotContainKey("error"));
                assertThat(up.details()).containsEntry("reachableNodes", 3).containsEntry("quorum", 3);

                RedisTestServer paused = masters.get(1);
                paused.pause();
                try {
                    // Awaited: on a loaded machine a healthy master may miss one
                    // operation timeout too.
                    HealthReading down = await().atMost(Duration.ofSeconds(20))
                        .until(indicator::get, health -> health.details().get("reachableNodes").equals(2));
                    assertThat(down.status()).isEqualTo("DOWN");
                    assertThat(nodes(down).get(address(paused))).containsEntry("reachable", false)
                        .containsEntry("error", "no answer within distributed-lock.operation-timeout=PT1S");
                    assertThat(nodes(down).get(addresses[0])).containsEntry("reachable", true);
                    assertThat(nodes(down).get(addresses[2])).containsEntry("reachable", true);
                }
                finally {
                    paused.resume();
                }
                await().atMost(Duration.ofSeconds(20)).until(() -> indicator.get().isUp());
            });
    }

}
