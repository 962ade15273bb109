package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.github.distlock.core.LockBackend;
import io.github.distlock.testsupport.RedisSentinelExtension;

/**
 * Applications that reach Redis through Sentinel ({@code spring.data.redis.sentinel.*}),
 * on either client: the whole lifecycle, hand-over between two instances included, on the
 * master Sentinel names.
 */
class SentinelLockTest {

    @RegisterExtension
    static final RedisSentinelExtension sentinel = new RedisSentinelExtension().resetBeforeEach();

    static Stream<Named<String[]>> clients() {
        return Stream.of(Named.of("Lettuce", new String[] { "spring.data.redis.client-type=lettuce" }),
                Named.of("Jedis", new String[] { "spring.data.redis.client-type=jedis" }));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("clients")
    void theWholeLifecycleWorksThroughSentinel(String[] client) throws Exception {
        String[] properties = { client[0], "spring.data.redis.sentinel.master=" + sentinel.masterName(),
                "spring.data.redis.sentinel.nodes=" + String.join(",", sentinel.sentinelHostAndPorts()) };
        try (LockApplication first = LockApplication.start(properties);
                LockApplication second = LockApplication.start(properties)) {
            assertThat(first.bean(LockBackend.class))
                .isInstanceOf(client[0].endsWith("jedis") ? SpringDataLockBackend.class : LettuceLockBackend.class);

            LockLifecycle.run("order:1", first.lockService(), second.lockService(), sentinel.master());
        }
    }

}
