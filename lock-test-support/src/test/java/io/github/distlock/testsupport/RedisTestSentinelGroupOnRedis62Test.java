package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThatCode;

import org.junit.jupiter.api.Test;

/**
 * The Sentinel group on the Redis 6.2 that the fixtures fall back to when no
 * {@code redis-server} is installed. Sentinel 6.2 has no {@code SENTINEL DEBUG}, so its
 * own ten-second INFO period applies and this test takes about fifteen seconds; it is the
 * only one that runs the group's 6.2 code path.
 */
class RedisTestSentinelGroupOnRedis62Test {

    @Test
    void failoverEndsWithTheOldMasterAsAReplicaOfTheNewOne() {
        assumeThatCode(RedisServerBinary::bundled).as("a bundled Redis 6.2 for this platform")
            .doesNotThrowAnyException();
        try (RedisTestSentinelGroup group = RedisTestSentinelGroup.builder()
            .binary(RedisServerBinary.bundled())
            .masterName("orders")
            .start()) {
            RedisTestServer before = group.master();
            assertThat(before.infoValue("server", "redis_version")).startsWith("6.2.");

            RedisTestServer after = group.failover();

            assertThat(after).isNotSameAs(before);
            assertThat(group.masterHostAndPort()).isEqualTo("127.0.0.1:" + after.port());
            assertThat(before.infoValue("replication", "master_port")).isEqualTo(Integer.toString(after.port()));
            assertThat(before.infoValue("replication", "master_link_status")).isEqualTo("up");
        }
    }

}
