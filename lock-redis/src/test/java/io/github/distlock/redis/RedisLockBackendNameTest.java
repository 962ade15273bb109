package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.core.LockKey;
import io.github.distlock.testsupport.RedisTestServer;
import io.lettuce.core.RedisClient;

/**
 * {@code RedisLockBackend}, the deprecated name of {@link LettuceLockBackend}: code that builds one still compiles
 * and gets the Lettuce backend, with the same keys and behaviour.
 */
@SuppressWarnings("deprecation")
class RedisLockBackendNameTest {

    private RedisTestServer redis;
    private RedisClient client;
    private RedisLockBackend backend;

    @AfterEach
    void close() {
        if (backend != null) {
            backend.close();
        }
        if (client != null) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void theOldNameBuildsTheLettuceBackendWithTheSameLocks() {
        redis = RedisTestServer.start();
        client = RedisClient.create(redis.redisUri());
        backend = new RedisLockBackend(new LockConnection(() -> client, Duration.ofSeconds(2)), "lock:",
                ReleaseChannel.everyKeyOn(RedisLockBackend.releaseChannel("lock:")), ReplicaAcks.NONE);
        assertThat(backend.awaitConnected(System.nanoTime() + TimeUnit.SECONDS.toNanos(10))).isTrue();
        LockKey key = backend.lockKey("order:7");

        assertThat(backend).isInstanceOf(LettuceLockBackend.class);
        assertThat(backend.tryAcquire(key, "holder", 30_000).acquired()).isTrue();
        assertThat(redis.get("lock:{order:7}")).isEqualTo("holder");
        assertThat(backend.tryAcquire(key, "other", 30_000).acquired()).isFalse();
        assertThat(backend.release(key, "holder")).isTrue();
        assertThat(redis.get("lock:{order:7}")).isNull();
        assertThat(List.of(RedisLockBackend.QUEUE_SUFFIX, RedisLockBackend.WAITING_SUFFIX))
                .containsExactly(LettuceLockBackend.QUEUE_SUFFIX, LettuceLockBackend.WAITING_SUFFIX);
    }
}
