package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Moving a hash slot between masters, in one go or left half-way, and finding keys on
 * every master.
 */
class SlotMigrationTest {

    @RegisterExtension
    static RedisClusterExtension cluster = new RedisClusterExtension();

    @Test
    void aMigratedSlotMovesItsKeysWithTheirTtlsAndTheOldOwnerAnswersMoved() {
        RedisTestCluster redisCluster = cluster.cluster();
        String key = "moving:{a}";
        int slot = redisCluster.slotOf(key);
        RedisTestServer from = redisCluster.nodeForSlot(slot);
        RedisTestServer to = redisCluster.nodes().stream().filter(node -> node != from).findFirst().orElseThrow();
        from.command("SET", key, "v", "PX", "60000");

        redisCluster.migrateSlot(slot, to);

        assertThat(redisCluster.nodeForKey(key)).isSameAs(to);
        assertThat(redisCluster.keys("moving:*")).containsEntry(key, to).hasSize(1);
        assertThat(to.get(key)).isEqualTo("v");
        assertThat(to.pttl(key)).isBetween(1L, 60_000L);
        assertThatThrownBy(() -> from.get(key)).isInstanceOf(RedisErrorReplyException.class)
            .hasMessage("MOVED " + slot + " " + to.host() + ":" + to.port());
        for (RedisTestServer node : redisCluster.nodes()) {
            assertThat((String) node.command("CLUSTER", "INFO")).contains("cluster_slots_assigned:16384");
        }
    }

    @Test
    void aSlotLeftHalfWayRedirectsMovedKeysWithAskAndRefusesSplitMultiKeyCommands() {
        RedisTestCluster redisCluster = cluster.cluster();
        String moved = "half:{b}";
        String missing = "half:{b}:other";
        int slot = redisCluster.slotOf(moved);
        RedisTestServer from = redisCluster.nodeForSlot(slot);
        RedisTestServer to = redisCluster.nodes().stream().filter(node -> node != from).findFirst().orElseThrow();
        from.set(moved, "1");
        long refusedBefore = to.errorReplies("TRYAGAIN");

        try (RedisTestCluster.SlotMigration migration = redisCluster.beginSlotMigration(slot, to)) {
            assertThat(migration.moveKeys()).isEqualTo(1);

            assertThatThrownBy(() -> from.get(moved)).hasMessageStartingWith("ASK " + slot);
            try (RespConnection connection = to.openConnection()) {
                connection.command("ASKING");
                assertThatThrownBy(() -> connection.command("MGET", moved, missing)).hasMessageStartingWith("TRYAGAIN");
            }
            catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            assertThat(to.errorReplies("TRYAGAIN")).isEqualTo(refusedBefore + 1);
        }

        assertThat(redisCluster.nodeForSlot(slot)).isSameAs(to);
        assertThat(to.get(moved)).isEqualTo("1");
    }

}
