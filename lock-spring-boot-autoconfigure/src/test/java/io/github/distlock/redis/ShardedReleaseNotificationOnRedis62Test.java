package io.github.distlock.redis;

import static io.github.distlock.redis.LockApplication.clusterNodes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.LockBackend.AcquireResult;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.RedisHandOverNotifications.Mode;
import io.github.distlock.testsupport.RedisServerBinary;
import io.github.distlock.testsupport.RedisTestCluster;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * A Redis 6.2 Cluster (the binary the embedded-redis jar bundles) has no sharded pub/sub:
 * Lettuce instances fall back to the global channel and say so at startup, and a release
 * told to {@code SPUBLISH} (a 6.2 node that joined a 7 cluster) still completes,
 * announcing on the global channel.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(OutputCaptureExtension.class)
class ShardedReleaseNotificationOnRedis62Test {

    private static final String PREFIX = "lock:";

    private static final String GLOBAL_CHANNEL = HandOverSubscriber.handOverChannel(PREFIX);

    private static final Duration TTL = Duration.ofSeconds(30);

    private RedisTestCluster cluster;

    private LockApplication holder;

    private LockApplication waiter;

    @BeforeAll
    void startClusterAndInstances() {
        cluster = RedisTestCluster.start(3, RedisServerBinary.bundled());
        holder = LockApplication.start(clusterNodes(cluster.hostAndPorts()));
        waiter = LockApplication.start(clusterNodes(cluster.hostAndPorts()));
    }

    @AfterAll
    void stop() {
        if (holder != null) {
            holder.close();
        }
        if (waiter != null) {
            waiter.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void emptyCluster() {
        cluster.nodes().forEach(RedisTestServer::flushAll);
    }

    @Test
    void theNodesRunRedis62AndTheInstancesUseTheGlobalChannel(CapturedOutput output) {
        assertThat(cluster.node(0).infoValue("server", "redis_version")).startsWith("6.2");
        try (LockApplication starting = LockApplication.start(clusterNodes(cluster.hostAndPorts()))) {
            RedisHandOverNotifications notifications = starting.bean(RedisHandOverNotifications.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> notifications.mode() != null);

            assertThat(notifications.mode()).isEqualTo(Mode.GLOBAL);
            assertThat(output).contains("Lock release notifications: pub/sub on channel 'lock:released' (Redis "
                    + "Cluster with nodes older than 7.0, which have no sharded pub/sub: 127.0.0.1:");
        }
    }

    @Test
    void aReleaseHandsOverThroughTheGlobalChannel() throws Exception {
        await().atMost(Duration.ofSeconds(10))
            .until(() -> waiter.bean(RedisHandOverNotifications.class).mode() != null);
        String name = "old:1";
        RedisTestServer owner = cluster.nodeForKey(RedisKeyNaming.lockKey(PREFIX, name).storeKey());
        cluster.nodes().forEach(RedisTestServer::resetStats);
        LockHandle held = holder.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken());
        CompletableFuture<LockHandle> waiting = CompletableFuture.supplyAsync(() -> waiter.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ofSeconds(30))));
        await().atMost(Duration.ofSeconds(10))
            .until(() -> cluster.nodes().stream().mapToLong(node -> node.subscriberCount(GLOBAL_CHANNEL)).sum() == 1);

        assertThat(held.release()).isTrue();
        LockHandle handedOver = waiting.get(20, TimeUnit.SECONDS);

        assertThat(handedOver.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(owner.commandCalls("publish")).isEqualTo(1);
        assertThat(handedOver.release()).isTrue();
    }

    /**
     * release.lua hands the lock over before it announces it: a node that does not know
     * {@code SPUBLISH} must not turn that into a failed release (the lock would be handed
     * over and the caller told otherwise), so it announces with {@code PUBLISH} instead.
     */
    @Test
    void aReleaseToldToSpublishOnANodeWithoutItStillHandsOverAndPublishes() {
        ShardedHandOverChannels channels = new ShardedHandOverChannels(PREFIX);
        LettuceLockBackend backend = new LettuceLockBackend(holder.bean(RedisConnectionFactory.class),
                Duration.ofSeconds(2), PREFIX, key -> HandOverChannel.sharded(GLOBAL_CHANNEL, channels.channelFor(key)),
                ReplicaAcks.NONE);
        try {
            LockKey key = RedisKeyNaming.lockKey(PREFIX, "old:2");
            RedisTestServer owner = cluster.nodeForKey(key.storeKey());
            assertThat(backend.tryAcquire(key, "holder-token", TTL.toMillis(), 0, false, false).acquired()).isTrue();
            AcquireResult queued = backend.tryAcquire(key, "waiter-token", TTL.toMillis(), 10_000, false, false);
            assertThat(queued.acquired()).isFalse();
            owner.resetStats();

            assertThat(backend.release(key, "holder-token")).isTrue();

            assertThat(owner.get(key.storeKey())).as("handed over").isEqualTo("waiter-token");
            assertThat(owner.commandCalls("publish")).as("announced on the global channel").isEqualTo(1);
            assertThat(backend.release(key, "waiter-token")).isTrue();
        }
        finally {
            backend.close();
        }
    }

}
