package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.testsupport.RedisCommandMatcher;
import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisServerBinary;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Redis 6.2, the oldest supported server (the one the embedded-redis jar bundles),
 * refuses {@code SET ... NX ... GET}; the first attempt then runs the acquire script
 * instead, just as idempotent.
 */
class Redis62CompatibilityTest {

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension(
            RedisTestServer.builder().binary(RedisServerBinary.bundled()))
        .resetBeforeEach();

    private RedisTestServer redis;

    private RedisFaultProxy proxy;

    private LockServiceConnection instance;

    private LockServiceConnection other;

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        proxy = RedisFaultProxy.start(redis);
        instance = new LockServiceConnection(proxy.host(), proxy.port(), Duration.ofSeconds(2), true,
                backend -> backend);
        other = new LockServiceConnection(redis);
    }

    @AfterEach
    void disconnect() throws Exception {
        instance.close();
        other.close();
        proxy.close();
    }

    @Test
    void theServerIsRedis62() {
        assertThat(redis.infoValue("server", "redis_version")).startsWith("6.2");
    }

    @Test
    void aFreeLockIsAcquiredExcludesOthersAndIsReleased() {
        Optional<LockHandle> acquired = instance.service.tryLock("old", Duration.ofSeconds(30), Duration.ZERO);

        assertThat(acquired).isPresent();
        assertThat(other.service.tryLock("old", Duration.ofSeconds(30), Duration.ZERO)).isEmpty();
        assertThat(acquired.get().fencingToken()).isPositive();
        assertThat(acquired.get().release()).isTrue();
        assertThat(redis.get("lock:{old}")).isNull();
    }

    @Test
    void aFirstAttemptWhoseReplyWasLostIsStillAcquiredWhenResent() {
        // Warm-up: learns that this server refuses SET NX GET, and caches the scripts.
        instance.service.lock("warm-up", Duration.ofSeconds(5), Duration.ZERO).release();
        proxy.onNext(RedisCommandMatcher.named("EVALSHA")).dropReplyAndClose();

        Optional<LockHandle> acquired = instance.service.tryLock("old", Duration.ofSeconds(30), Duration.ZERO);

        assertThat(acquired).isPresent();
        assertThat(other.service.tryLock("old", Duration.ofSeconds(30), Duration.ZERO)).isEmpty();
        assertThat(acquired.get().release()).isTrue();
    }

}
