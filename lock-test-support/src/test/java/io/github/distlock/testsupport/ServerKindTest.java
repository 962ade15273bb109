package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

/**
 * Which server a run uses ({@code distlock.test.server}), and how a server is named from
 * its {@code INFO server}: Valkey by {@code valkey_version}, never by the
 * {@code redis_version:7.2.4} it reports for compatibility.
 */
class ServerKindTest {

    @Test
    void valkeyIsToldApartAndNamedByItsOwnVersion() {
        String valkey = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.1.2\r\n";

        assertThat(ServerKind.of(valkey)).isEqualTo(ServerKind.VALKEY);
        assertThat(ServerKind.describe(valkey)).isEqualTo("Valkey 9.1.2");
    }

    @Test
    void redisIsNamedByRedisVersion() {
        String redis = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n";

        assertThat(ServerKind.of(redis)).isEqualTo(ServerKind.REDIS);
        assertThat(ServerKind.describe(redis)).isEqualTo("Redis 7.0.15");
    }

    @Test
    void theRunsServerIsChosenBySystemPropertyInAnyCase() {
        assertThat(withServerProperty("Valkey", RedisServerBinary::server)).isEqualTo(ServerKind.VALKEY);
        assertThat(withServerProperty("redis", RedisServerBinary::server)).isEqualTo(ServerKind.REDIS);
    }

    @Test
    void anUnknownServerIsRefusedNamingThePropertyAndTheChoices() {
        assertThatThrownBy(() -> withServerProperty("keydb", RedisServerBinary::server))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("system property distlock.test.server is 'keydb'")
            .hasMessageContaining("'redis' or 'valkey'");
    }

    @Test
    void theExecutablesAreTheProductsOwn() {
        assertThat(ServerKind.REDIS.executable()).isEqualTo("redis-server");
        assertThat(ServerKind.VALKEY.executable()).isEqualTo("valkey-server");
    }

    private static <T> T withServerProperty(String value, Supplier<T> action) {
        String before = System.getProperty(RedisServerBinary.SERVER_PROPERTY);
        System.setProperty(RedisServerBinary.SERVER_PROPERTY, value);
        try {
            return action.get();
        }
        finally {
            if (before == null) {
                System.clearProperty(RedisServerBinary.SERVER_PROPERTY);
            }
            else {
                System.setProperty(RedisServerBinary.SERVER_PROPERTY, before);
            }
        }
    }

}
