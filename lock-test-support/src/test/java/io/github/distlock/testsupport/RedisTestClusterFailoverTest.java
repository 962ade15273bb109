package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A 3-master cluster with a replica per master, and a master failed over to its replica
 * on purpose.
 */
class RedisTestClusterFailoverTest {

    @RegisterExtension
    static RedisClusterExtension cluster = new RedisClusterExtension(3, 1);

    @Test
    void everyMasterHasAReplicaThatEveryNodeKnows() {
        RedisTestCluster redisCluster = cluster.cluster();
        assertThat(redisCluster.nodes()).hasSize(6);
        assertThat(redisCluster.masters()).hasSize(3).doesNotContainAnyElementsOf(redisCluster.replicas());
        assertThat(redisCluster.replicas()).hasSize(3);
        for (RedisTestServer master : redisCluster.masters()) {
            assertThat(redisCluster.replicasOf(master)).hasSize(1);
            assertThat(master.infoValue("replication", "role")).isEqualTo("master");
        }
        for (RedisTestServer node : redisCluster.nodes()) {
            assertThat((String) node.command("CLUSTER", "INFO")).contains("cluster_state:ok", "cluster_known_nodes:6",
                    "cluster_size:3");
        }
    }

    @Test
    void aFailoverPromotesTheReplicaWithEveryWriteAndTheOldMasterFollowsIt() {
        RedisTestCluster redisCluster = cluster.cluster();
        String key = "lock:{failover-1}";
        RedisTestServer before = redisCluster.nodeForKey(key);
        RedisTestServer replica = redisCluster.replicasOf(before).get(0);
        before.set(key, "written-before");

        RedisTestServer after = redisCluster.failover(before);

        assertThat(after).isSameAs(replica);
        assertThat(redisCluster.nodeForKey(key)).isSameAs(after);
        assertThat(redisCluster.masters()).contains(after).doesNotContain(before);
        assertThat(redisCluster.replicasOf(after)).containsExactly(before);
        assertThat(after.get(key)).as("a manual failover loses no acknowledged write").isEqualTo("written-before");
        assertThatThrownBy(() -> before.get(key)).isInstanceOf(RedisErrorReplyException.class)
            .hasMessage("MOVED " + redisCluster.slotOf(key) + " " + after.host() + ":" + after.port());
        assertThat(redisCluster.keys("lock:*")).as("keys are found on masters only")
            .containsEntry(key, after)
            .hasSize(1);
    }

    @Test
    void aNodeWithoutReplicaCannotBeFailedOver() {
        RedisTestCluster redisCluster = cluster.cluster();
        RedisTestServer replica = redisCluster.replicas().get(0);

        assertThatThrownBy(() -> redisCluster.failover(replica)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("is not a master");
    }

}
