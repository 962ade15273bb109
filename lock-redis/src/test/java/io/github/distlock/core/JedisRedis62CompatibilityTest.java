package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.testsupport.RedisServerBinary;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Redis 6.2 refuses {@code SET ... NX ... GET}; on Jedis too, the first attempt then runs
 * the acquire script instead, and keeps doing so without asking the server again.
 */
class JedisRedis62CompatibilityTest {

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension(
            RedisTestServer.builder().binary(RedisServerBinary.bundled()))
        .resetBeforeEach();

    private RedisTestServer redis;

    private LockServiceConnection instance;

    private LockServiceConnection other;

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        instance = new LockServiceConnection(LockServiceConnection.Driver.JEDIS, redis);
        other = new LockServiceConnection(LockServiceConnection.Driver.JEDIS, redis);
    }

    @AfterEach
    void disconnect() throws Exception {
        instance.close();
        other.close();
    }

    @Test
    void aFreeLockIsAcquiredExcludesOthersAndIsReleasedOnRedis62() {
        assertThat(redis.infoValue("server", "redis_version")).startsWith("6.2");

        Optional<LockHandle> acquired = instance.service.tryLock("old", Duration.ofSeconds(30), Duration.ZERO);

        assertThat(acquired).isPresent();
        assertThat(other.service.tryLock("old", Duration.ofSeconds(30), Duration.ZERO)).isEmpty();
        assertThat(acquired.get().fencingToken()).isPositive();
        assertThat(acquired.get().release()).isTrue();
        assertThat(redis.get("lock:{old}")).isNull();
    }

    @Test
    void onceRefusedTheBareSetIsNotTriedAgain() {
        instance.service.lock("warm-up", Duration.ofSeconds(5), Duration.ZERO).release();
        redis.resetStats();

        LockHandle handle = instance.service.lock("old", Duration.ofSeconds(30), Duration.ZERO);

        assertThat(redis.errorReplies("ERR")).as("no SET NX GET sent and refused again").isZero();
        assertThat(redis.scriptCalls()).as("the acquire script took the lock").isEqualTo(1);
        assertThat(handle.release()).isTrue();
    }

}
