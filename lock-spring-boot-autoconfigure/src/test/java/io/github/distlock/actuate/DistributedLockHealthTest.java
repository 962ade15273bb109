package io.github.distlock.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.actuate.DistributedLockActuatorAutoConfiguration;
import io.github.distlock.core.LockContext;
import io.github.distlock.core.LockListener;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * The {@code distributedLock} health contributor against real Redis servers: down while
 * the store does not answer (a paused {@code redis-server}) and up again after, down
 * while the watchdog is kept from renewing, and for Redlock up with a minority of nodes
 * down and down without a majority. Read through {@link HealthReading}, so the same
 * checks run on Boot 4.1's contributor and, in the boot3 leg, on Boot 3.5's.
 */
class DistributedLockHealthTest {

    @RegisterExtension
    static final RedisServerExtension redisExtension = RedisServerExtension.masters(3).resetBeforeEach();

    private ApplicationContextRunner runner(String... properties) {
        RedisTestServer redis = redisExtension.server(0);
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS,
                    DistributedLockAutoConfiguration.class, EndpointAutoConfiguration.class,
                    BootAutoConfigurations.HEALTH_CONTRIBUTOR, DistributedLockActuatorAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
                    "distributed-lock.operation-timeout=1s")
            .withPropertyValues(properties);
    }

    /**
     * How the health detail names a standalone node: its address, as the application
     * configured it.
     */
    private static String address(RedisTestServer redis) {
        return redis.host() + ":" + redis.port();
    }

    @Test
    void isDownWhileRedisDoesNotAnswerWithinTheOperationTimeoutAndUpAgainAfter() {
        String address = address(redisExtension.server(0));
        runner().run(context -> {
            Supplier<HealthReading> indicator = HealthReading.of(context);
            await().atMost(Duration.ofSeconds(10)).until(() -> indicator.get().isUp());
            HealthReading up = indicator.get();
            assertThat(up.details()).containsEntry("backend", "LettuceLockBackend")
                .containsEntry("quorum", 1)
                .containsEntry("reachableNodes", 1);
            assertThat(up.node(address)).containsEntry("reachable", true).containsKey("latencyMillis");
            assertThat(up.detail("watchdog")).containsEntry("lagging", false).containsEntry("lagLimitMillis", 1000L);

            RedisTestServer redis = redisExtension.server(0);
            redis.pause();
            try {
                HealthReading down = indicator.get();
                assertThat(down.status()).isEqualTo("DOWN");
                assertThat(down.node(address)).containsEntry("reachable", false);
                // Plain words: no lock was involved, so no lock name and no command.
                assertThat((String) down.node(address).get("error"))
                    .isEqualTo("no answer within distributed-lock.operation-timeout=PT1S");
                assertThat((Double) down.node(address).get("latencyMillis")).isGreaterThanOrEqualTo(1000.0);
            }
            finally {
                redis.resume();
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> indicator.get().isUp());
        });
    }

    @Test
    void isDownWhileTheWatchdogIsKeptFromRenewingAndUpOnceItCatchesUp() {
        CountDownLatch unblock = new CountDownLatch(1);
        AtomicBoolean blocked = new AtomicBoolean();
        // A listener that blocks the watchdog's thread on the first renewal, as a slow
        // metrics
        // registry might: every other renewal falls behind schedule meanwhile.
        LockListener blocking = new LockListener() {
            @Override
            public void renewed(LockContext lock, boolean renewed) {
                if (blocked.compareAndSet(false, true)) {
                    try {
                        unblock.await(30, TimeUnit.SECONDS);
                    }
                    catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        };
        runner().withBean(LockListener.class, () -> blocking).run(context -> {
            Supplier<HealthReading> indicator = HealthReading.of(context);
            LockService locks = context.getBean(LockService.class);
            try (LockHandle handle = locks.lock(LockRequest.of("watched").withTtl(Duration.ofSeconds(3)))) {
                await().atMost(Duration.ofSeconds(10)).until(blocked::get);
                await().atMost(Duration.ofSeconds(10)).until(() -> indicator.get().isDown());
                HealthReading down = indicator.get();
                assertThat(down.node(address(redisExtension.server(0)))).containsEntry("reachable", true);
                assertThat(down.detail("watchdog")).containsEntry("lagging", true).containsEntry("leases", 1);
                assertThat((Double) down.detail("watchdog").get("lagMillis")).isGreaterThan(1000.0);

                unblock.countDown();
                await().atMost(Duration.ofSeconds(10)).until(() -> indicator.get().isUp());
                assertThat(indicator.get().detail("watchdog")).containsEntry("lagging", false);
            }
            finally {
                unblock.countDown();
            }
        });
    }

    @Test
    void redlockIsUpWithAMinorityOfNodesDownAndDownWithoutAMajority() {
        String nodes = String.join(",", redisExtension.redisUris());
        runner("distributed-lock.redlock.nodes=" + nodes, "distributed-lock.redlock.node-timeout=1s",
                // These servers started moments ago: with restart protection none would
                // vote yet.
                "distributed-lock.redlock.restart-protection=false")
            .run(context -> {
                Supplier<HealthReading> indicator = HealthReading.of(context);
                await().atMost(Duration.ofSeconds(10))
                    .until(() -> indicator.get().details().get("reachableNodes").equals(3));
                HealthReading all = indicator.get();
                assertThat(all.status()).isEqualTo("UP");
                assertThat(all.details()).containsEntry("backend", "RedlockBackend").containsEntry("quorum", 2);
                assertThat(all.detail("nodes")).hasSize(3);

                RedisTestServer first = redisExtension.server(0);
                RedisTestServer second = redisExtension.server(1);
                first.pause();
                try {
                    // Awaited: on a loaded machine a healthy node may miss one node
                    // timeout too.
                    HealthReading minorityDown = await().atMost(Duration.ofSeconds(10))
                        .until(indicator::get, health -> health.details().get("reachableNodes").equals(2));
                    assertThat(minorityDown.status()).isEqualTo("UP");
                    assertThat(minorityDown.detail("nodes").values())
                        .filteredOn(node -> Boolean.FALSE.equals(((Map<?, ?>) node).get("reachable")))
                        .hasSize(1);

                    second.pause();
                    try {
                        HealthReading majorityDown = indicator.get();
                        assertThat(majorityDown.status()).isEqualTo("DOWN");
                        assertThat(majorityDown.details()).containsEntry("reachableNodes", 1);
                    }
                    finally {
                        second.resume();
                    }
                }
                finally {
                    first.resume();
                }
                await().atMost(Duration.ofSeconds(10))
                    .until(() -> indicator.get().details().get("reachableNodes").equals(3));
            });
    }

    @Test
    void redlockKeyStateListsEachNodeAndAMajoritySummary() {
        String nodes = String.join(",", redisExtension.redisUris());
        runner("distributed-lock.redlock.nodes=" + nodes, "distributed-lock.redlock.node-timeout=1s",
                "distributed-lock.redlock.restart-protection=false", "management.endpoints.web.exposure.include=locks")
            .run(context -> {
                LockService locks = context.getBean(LockService.class);
                LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
                LockHandle handle = await().atMost(Duration.ofSeconds(10))
                    .ignoreExceptions()
                    .until(() -> locks.lock(LockRequest.of("shared").withTtl(Duration.ofSeconds(30))),
                            held -> held != null);
                try {
                    long fence = handle.fencingToken();
                    LocksEndpoint.KeyState all = endpoint.lock("shared");
                    assertThat(all.held()).isTrue();
                    assertThat(all.pttlMillis()).isPositive().isLessThanOrEqualTo(30_000);
                    assertThat(all.lastFencingToken()).isEqualTo(fence);
                    assertThat(all.nodes()).hasSize(3).allSatisfy(node -> assertThat(node.held()).isTrue());

                    RedisTestServer first = redisExtension.server(0);
                    first.del("lock:{shared}");
                    RedisTestServer second = redisExtension.server(1);
                    second.pause();
                    try {
                        LocksEndpoint.KeyState minority = endpoint.lock("shared");
                        // One node lost the key and one does not answer: no majority
                        // holds it.
                        assertThat(minority.held()).isFalse();
                        assertThat(minority.nodes()).extracting(LocksEndpoint.Node::held)
                            .containsExactly(false, null, true);
                        assertThat(minority.nodes().get(1).error()).isNotBlank();
                    }
                    finally {
                        second.resume();
                    }
                    assertThat(endpoint.lock("shared").held()).isTrue();
                }
                finally {
                    handle.release();
                }
                assertThat(endpoint.lock("shared").held()).isFalse();
            });
    }

}
