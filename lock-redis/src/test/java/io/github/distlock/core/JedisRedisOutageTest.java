package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/**
 * {@link RedisOutageTest} on a Jedis connection factory and
 * {@code SpringDataLockBackend}: a stopped or paused Redis fails calls within
 * {@code operation-timeout}, although Jedis itself would block for its socket timeout (a
 * minute here).
 */
class JedisRedisOutageTest extends RedisOutageTest {

    @Override
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.JEDIS;
    }

    /**
     * Replaces the Lettuce test, which looks for the Lettuce connect in the subscriber's
     * stack.
     */
    @Override
    @Test
    void shutdownDoesNotWaitForASubscriptionStuckConnectingToAHungRedis() throws Exception {
        redis.pause();
        assertThat(instance.subscriber.startListening()).isFalse();
        // The subscription's connection now hangs in its handshake, for Jedis's 60 s
        // socket timeout.
        await().pollDelay(Duration.ofMillis(300)).until(() -> true);

        long started = System.nanoTime();
        instance.subscriber.close();

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
        assertThat(redis.isPaused()).as("Redis still hangs: close did not wait for it").isTrue();
        redis.resume();
    }

}
