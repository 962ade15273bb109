package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * What a node's {@code INFO server} says it is: Valkey by its own version (it reports
 * {@code redis_version:7.2.4} for compatibility), Redis by {@code redis_version}; and,
 * for when an ACL keeps the node from being asked, whether that version has sharded
 * pub/sub.
 */
class ServerVersionTest {

    private static final String VALKEY_9_1 = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n"
            + "valkey_version:9.1.2\r\nvalkey_release_stage:ga\r\nserver_mode:cluster\r\n";

    private static final String REDIS_7_0 = "# Server\r\nredis_version:7.0.15\r\nredis_mode:cluster\r\n";

    private static final String REDIS_6_2 = "# Server\r\nredis_version:6.2.6\r\nredis_mode:cluster\r\n";

    @Test
    void valkeyIsNamedByItsOwnVersionNotTheRedisVersionItReports() {
        ServerVersion valkey = ServerVersion.of(VALKEY_9_1);

        assertThat(valkey).hasToString("Valkey 9.1.2");
        assertThat(valkey.isRedis()).isFalse();
        assertThat(valkey.version()).isEqualTo("9.1.2");
    }

    @Test
    void redisIsNamedByRedisVersion() {
        assertThat(ServerVersion.of(REDIS_7_0)).hasToString("Redis 7.0.15");
        assertThat(ServerVersion.of(REDIS_6_2)).hasToString("Redis 6.2.6");
        assertThat(ServerVersion.of(REDIS_6_2).isRedis()).isTrue();
    }

    @Test
    void byVersionRedisHasShardedPubSubFrom70AndEveryValkeyHasIt() {
        assertThat(ServerVersion.of(REDIS_6_2).hasShardedPubSub()).isFalse();
        assertThat(ServerVersion.of(REDIS_7_0).hasShardedPubSub()).isTrue();
        assertThat(ServerVersion.of(VALKEY_9_1).hasShardedPubSub()).isTrue();
        assertThat(ServerVersion.of("# Server\nredis_version:7.2.4\nvalkey_version:7.2.5\n").hasShardedPubSub())
            .isTrue();
    }

    @Test
    void aReplyWithoutAVersionIsUnknownAndNotTakenForSharded() {
        ServerVersion unknown = ServerVersion.of("# Server\r\nos:Linux\r\n");

        assertThat(unknown).hasToString("Redis unknown");
        assertThat(unknown.hasShardedPubSub()).isFalse();
    }

}
