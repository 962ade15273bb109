package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Topologies beyond a single node: a replica of a master, and independent masters for
 * Redlock.
 */
class ReplicaAndManyMastersTest {

    @Test
    void replicaFollowsTheMasterAndRejectsWrites() {
        try (RedisTestServer master = RedisTestServer.start();
                RedisTestServer replica = RedisTestServer.startReplicaOf(master)) {

            assertThat(replica.port()).isNotEqualTo(master.port());
            assertThat(replica.infoValue("replication", "role")).isEqualTo("slave");
            assertThat(replica.infoValue("replication", "master_port")).isEqualTo(Integer.toString(master.port()));
            assertThat(replica.infoValue("replication", "master_link_status")).isEqualTo("up");

            master.set("lock:order-1", "owner-a");

            await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(replica.get("lock:order-1")).isEqualTo("owner-a"));
            assertThatThrownBy(() -> replica.set("k", "v")).isInstanceOf(RedisErrorReplyException.class)
                .hasMessageStartingWith("READONLY");
        }
    }

    @Test
    void replicaLinkComesBackAfterTheMasterRestarts() {
        try (RedisTestServer master = RedisTestServer.start();
                RedisTestServer replica = RedisTestServer.startReplicaOf(master)) {
            master.kill();
            await().atMost(Duration.ofSeconds(20))
                .untilAsserted(
                        () -> assertThat(replica.infoValue("replication", "master_link_status")).isEqualTo("down"));

            master.restart();
            replica.awaitMasterLinkUp(Duration.ofSeconds(10));
            master.set("after-restart", "1");

            await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(replica.get("after-restart")).isEqualTo("1"));
        }
    }

    @Test
    void startManyGivesIndependentMastersOnDistinctPorts() {
        List<RedisTestServer> masters = RedisTestServer.startMany(3);
        try {
            assertThat(masters).hasSize(3);
            assertThat(masters).extracting(RedisTestServer::port).doesNotHaveDuplicates().doesNotContain(6379);
            assertThat(masters).extracting(RedisTestServer::pid).doesNotHaveDuplicates();

            masters.get(0).set("lock:order-1", "owner-a");

            assertThat(masters.get(1).get("lock:order-1")).isNull();
            assertThat(masters.get(2).dbSize()).isZero();
            assertThat(masters).allSatisfy(m -> assertThat(m.infoValue("replication", "role")).isEqualTo("master"));
        }
        finally {
            masters.forEach(RedisTestServer::close);
        }
    }

    @Test
    void startManyRejectsANonPositiveCount() {
        assertThatThrownBy(() -> RedisTestServer.startMany(0)).isInstanceOf(IllegalArgumentException.class);
    }

}
