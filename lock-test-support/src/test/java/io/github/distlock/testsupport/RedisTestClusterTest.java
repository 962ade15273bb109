package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A 3-master Redis Cluster that forms, routes keys by slot and survives a node restart.
 */
class RedisTestClusterTest {

    @RegisterExtension
    static RedisClusterExtension cluster = new RedisClusterExtension();

    @Test
    void everyNodeSeesAHealthyClusterWithAllSlotsAssigned() {
        assertThat(cluster.nodes()).hasSize(3);
        assertThat(cluster.hostAndPorts()).doesNotHaveDuplicates()
            .noneMatch(hostAndPort -> hostAndPort.endsWith(":6379"));
        for (RedisTestServer node : cluster.nodes()) {
            String info = (String) node.command("CLUSTER", "INFO");
            assertThat(info).contains("cluster_state:ok", "cluster_slots_assigned:16384", "cluster_known_nodes:3",
                    "cluster_size:3");
        }
    }

    @Test
    void keysAreServedByTheOwningNodeAndRedirectedElsewhere() {
        RedisTestCluster redisCluster = cluster.cluster();
        String key = "lock:{order-1}";
        RedisTestServer owner = redisCluster.nodeForKey(key);
        RedisTestServer other = redisCluster.nodes().stream().filter(n -> n != owner).findFirst().orElseThrow();

        owner.set(key, "owner-a");

        assertThat(owner.get(key)).isEqualTo("owner-a");
        assertThatThrownBy(() -> other.get(key)).isInstanceOf(RedisErrorReplyException.class)
            .hasMessage("MOVED " + redisCluster.slotOf(key) + " " + owner.host() + ":" + owner.port());
        assertThat(redisCluster.slotOf("lock:{order-1}:fence")).as("hash tags share a slot")
            .isEqualTo(redisCluster.slotOf(key));
    }

    @Test
    void aRestartedNodeRejoinsWithItsSlots() {
        RedisTestCluster redisCluster = cluster.cluster();
        RedisTestServer node = redisCluster.node(1);
        node.kill();

        node.restart();
        redisCluster.awaitClusterOk(Duration.ofSeconds(20));

        String key = "after-restart";
        RedisTestServer owner = redisCluster.nodeForKey(key);
        owner.set(key, "1");
        assertThat(owner.get(key)).isEqualTo("1");
        assertThat(List.of(node.port())).doesNotContain(6379);
        assertThat((String) node.command("CLUSTER", "INFO")).contains("cluster_slots_assigned:16384");
    }

}
