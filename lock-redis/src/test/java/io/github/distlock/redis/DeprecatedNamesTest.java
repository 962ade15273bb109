package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.testsupport.RedisTestServer;
import io.lettuce.core.RedisClient;

/**
 * The deprecated names: code written against them still compiles and gets the renamed
 * classes, with the same keys, channels and behaviour. {@code RedisLockBackend} is
 * {@link LettuceLockBackend}; the release-signal types are the hand-over ones
 * ({@link HandOverSubscriber}, {@link HandOverChannel}, {@link ShardedHandOverChannels},
 * {@link RedisHandOverNotifications}).
 */
@SuppressWarnings("deprecation")
class DeprecatedNamesTest {

    private RedisTestServer redis;

    private RedisClient client;

    private RedisLockBackend backend;

    private LettuceConnectionFactory factory;

    @AfterEach
    void close() throws Exception {
        if (backend != null) {
            backend.close();
        }
        if (client != null) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        if (factory != null) {
            factory.destroy();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void redisLockBackendBuildsTheLettuceBackendWithTheSameLocks() {
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

    @Test
    void theReleaseSignalTypesAreTheHandOverOnesOnTheSameChannels() throws Exception {
        redis = RedisTestServer.start();
        factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(redis.host(), redis.port()));
        factory.afterPropertiesSet();
        factory.start();
        LockWaiters waiters = new LockWaiters();

        RedisReleaseSubscriber subscriber = new RedisReleaseSubscriber(factory,
                RedisReleaseSubscriber.releaseChannel("lock:"), waiters);
        ReleaseNotifications notifications = new ReleaseNotifications(factory, "lock:", false, subscriber, waiters,
                Duration.ofSeconds(2));
        try {
            assertThat(RedisReleaseSubscriber.releaseChannel("lock:")).isEqualTo("lock:released")
                .isEqualTo(HandOverSubscriber.handOverChannel("lock:"));
            assertThat(subscriber).isInstanceOf(HandOverSubscriber.class);
            assertThat(notifications).isInstanceOf(RedisHandOverNotifications.class);
            assertThat(notifications.mode()).isEqualTo(RedisHandOverNotifications.Mode.GLOBAL);
            assertThat(notifications.apply(new LockKey("a", "lock:{a}")).toString())
                .isEqualTo(ReleaseChannel.global("lock:released").toString())
                .isEqualTo("PUBLISH lock:released");
            assertThat(ReleaseChannel.sharded("lock:released", "lock:released:{633}").toString())
                .isEqualTo(HandOverChannel.sharded("lock:released", "lock:released:{633}").toString());
            assertThat(new ShardedReleaseChannels("lock:").channelOf(8691))
                .isEqualTo(new ShardedHandOverChannels("lock:").channelOf(8691))
                .isEqualTo("lock:released:{633}");
            // The first wait starts the subscription, on the old channel name.
            await().atMost(Duration.ofSeconds(10)).until(subscriber::startListening);
            assertThat(redis.subscriberCount("lock:released")).isEqualTo(1);
        }
        finally {
            notifications.close();
            subscriber.close();
        }
    }

}
