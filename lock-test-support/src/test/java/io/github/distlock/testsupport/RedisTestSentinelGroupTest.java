package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A Sentinel group that forms, replicates, fails over on request and on a dead master,
 * and can be reset between tests. The tests share one group, so none assumes which node
 * is the master.
 */
class RedisTestSentinelGroupTest {

    @RegisterExtension
    static RedisSentinelExtension sentinel = new RedisSentinelExtension().resetBeforeEach();

    @Test
    void everySentinelReportsTheMasterAndKnowsTheOtherSentinelsAndTheReplica() {
        RedisTestSentinelGroup group = sentinel.group();
        RedisTestServer master = group.master();

        assertThat(group.sentinels()).hasSize(3);
        assertThat(group.replicas()).hasSize(1).doesNotContain(master);
        assertThat(group.sentinelHostAndPorts()).doesNotHaveDuplicates().noneMatch(a -> a.endsWith(":6379"));
        for (RedisTestServer node : group.sentinels()) {
            assertThat(node.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"))
                .isEqualTo(List.of("127.0.0.1", Integer.toString(master.port())));
            // Valkey 9 renamed the field.
            String modeField = node.serverKind() == ServerKind.VALKEY ? "server_mode" : "redis_mode";
            assertThat(node.infoValue("server", modeField)).isEqualTo("sentinel");
            assertThat((List<?>) node.command("SENTINEL", "SENTINELS", "mymaster")).hasSize(2);
        }
        assertThat(master.infoValue("replication", "role")).isEqualTo("master");
        assertThat(group.replicas().get(0).infoValue("replication", "master_port"))
            .isEqualTo(Integer.toString(master.port()));
        assertThat(group.masterHostAndPort()).isEqualTo("127.0.0.1:" + master.port());
    }

    @Test
    void aWriteOnTheMasterReachesTheReplica() {
        sentinel.master().set("lock:{order-1}", "token-a");

        RedisTestServer replica = sentinel.group().replicas().get(0);
        await().atMost(Duration.ofSeconds(20))
            .untilAsserted(() -> assertThat(replica.get("lock:{order-1}")).isEqualTo("token-a"));
    }

    @Test
    void failoverPromotesTheReplicaAndTurnsTheOldMasterIntoItsReplica() {
        RedisTestSentinelGroup group = sentinel.group();
        RedisTestServer before = group.master();
        RedisTestServer replica = group.replicas().get(0);
        before.set("written-before", "1");
        replica.awaitCaughtUpWith(before, Duration.ofSeconds(5));

        RedisTestServer after = group.failover();

        assertThat(after).isSameAs(replica);
        assertThat(group.master()).isSameAs(replica);
        for (RedisTestServer node : group.sentinels()) {
            assertThat(node.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"))
                .isEqualTo(List.of("127.0.0.1", Integer.toString(replica.port())));
        }
        assertThat(after.infoValue("replication", "role")).isEqualTo("master");
        assertThat(after.get("written-before")).isEqualTo("1");
        assertThat(before.infoValue("replication", "role")).isEqualTo("slave");
        assertThat(before.infoValue("replication", "master_port")).isEqualTo(Integer.toString(after.port()));
        assertThat(before.infoValue("replication", "master_link_status")).isEqualTo("up");
    }

    @Test
    void killingTheMasterMakesTheSentinelsPromoteTheReplica() {
        RedisTestSentinelGroup group = sentinel.group();
        RedisTestServer dead = group.master();
        RedisTestServer replica = group.replicas().get(0);

        dead.kill();
        RedisTestServer promoted = group.awaitMasterChange(dead, Duration.ofSeconds(15));

        assertThat(promoted).isSameAs(replica);
        assertThat(promoted.infoValue("replication", "role")).isEqualTo("master");
        promoted.set("after-the-kill", "1"); // writable: the Sentinels sent REPLICAOF NO
                                             // ONE
    }

    @Test
    void aRestartedSentinelKeepsItsIdentityAndItsViewOfTheGroup() {
        RedisTestSentinelGroup group = sentinel.group();
        RedisTestServer node = group.sentinels().get(2);
        Object id = node.command("SENTINEL", "MYID");

        node.restart();

        assertThat(node.command("SENTINEL", "MYID")).isEqualTo(id);
        assertThat(node.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"))
            .isEqualTo(List.of("127.0.0.1", Integer.toString(group.master().port())));
        group.awaitSettled(Duration.ofSeconds(10));
    }

    @Test
    void lettuceConnectedThroughTheSentinelsKeepsWritingToTheMasterAfterAFailover() {
        RedisTestSentinelGroup group = sentinel.group();
        List<RedisTestServer> sentinels = group.sentinels();
        RedisURI uri = RedisURI.Builder.sentinel(sentinels.get(0).host(), sentinels.get(0).port(), group.masterName())
            .withSentinel(sentinels.get(1).host(), sentinels.get(1).port())
            .withSentinel(sentinels.get(2).host(), sentinels.get(2).port())
            .withTimeout(Duration.ofSeconds(10))
            .build();
        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            RedisCommands<String, String> redis = connection.sync();
            RedisTestServer before = group.master();
            assertThat(redis.set("lock:{order-1}", "token-a", SetArgs.Builder.nx().px(30_000))).isEqualTo("OK");
            assertThat(servingPort(redis)).isEqualTo(before.port());

            RedisTestServer after = group.failover();

            // The old master dropped this connection when it became a replica; Lettuce
            // asked the Sentinels again.
            assertThat(redis.set("lock:{order-2}", "token-a", SetArgs.Builder.nx().px(30_000))).isEqualTo("OK");
            assertThat(servingPort(redis)).isEqualTo(after.port()).isNotEqualTo(before.port());
            assertThat(after.get("lock:{order-2}")).isEqualTo("token-a");
            assertThat(redis.get("lock:{order-1}")).as("replicated before the failover").isEqualTo("token-a");
        }
        finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static int servingPort(RedisCommands<String, String> redis) {
        return Integer.parseInt(RedisTestServer.parseInfoField(redis.info("server"), "tcp_port"));
    }

}
