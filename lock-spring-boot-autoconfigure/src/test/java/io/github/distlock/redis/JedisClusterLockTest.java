package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.distlock.core.LockBackend;

/**
 * Every {@link ClusterLockTest} on Jedis ({@code spring.data.redis.client-type=jedis}) and
 * {@link SpringDataLockBackend}, on a real 3-master cluster: awkward names, renewals batched per slot
 * and pipelined per master (so that a paused master does not cost the healthy masters' leases),
 * hand-over through cluster pub/sub, and slot migration (Jedis's cluster client follows {@code MOVED}
 * and {@code ASK} itself, and the renewal pipeline hands what a master refuses to it; the Lettuce
 * refresh property is ignored).
 */
class JedisClusterLockTest extends ClusterLockTest {

    @Override
    String[] clientProperties() {
        return new String[] { "spring.data.redis.client-type=jedis" };
    }

    @Test
    void theInstancesRunOnJedisAndTheSpringDataBackend() {
        try (LockApplication app = startInstance()) {
            assertThat(app.bean(RedisConnectionFactory.class)).isInstanceOf(JedisConnectionFactory.class);
            assertThat(app.bean(LockBackend.class)).isInstanceOf(SpringDataLockBackend.class);
        }
    }
}
