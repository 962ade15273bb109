package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.LockBackend;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Every {@link ClusterLockTest} on Jedis ({@code spring.data.redis.client-type=jedis})
 * and {@link SpringDataLockBackend}, on a real 3-master cluster: awkward names, renewals
 * batched per slot and pipelined per master (so that a paused master does not cost the
 * healthy masters' leases), hand-over through cluster pub/sub, and slot migration
 * (Jedis's cluster client follows {@code MOVED} and {@code ASK} itself, and the renewal
 * pipeline hands what a master refuses to it; the Lettuce refresh property is ignored).
 */
class JedisClusterLockTest extends ClusterLockTest {

    @Override
    String[] clientProperties() {
        return new String[] { "spring.data.redis.client-type=jedis" };
    }

    /**
     * A master that has not cached the renewal script (restarted, newly added, or
     * {@code SCRIPT
     * FLUSH}ed) answers the pipelined renewals with {@code NOSCRIPT}: the pipeline loads
     * the script there and sends them again, so the lease lives on, and without falling
     * back to one {@code EVAL} per slot through the cluster client.
     */
    @Test
    void renewalsReachAMasterThatForgotItsScriptsInOnePipeline() {
        Duration ttl = Duration.ofSeconds(3);
        try (LockApplication app = startInstance()) {
            LockHandle held = app.lockService()
                .lock(LockRequest.of("forgetful").withTtl(ttl).withWaitTime(Duration.ZERO).withWatchdog(true));
            Map<String, RedisTestServer> keys = clusterExtension.cluster().keys("lock:*");
            assertThat(keys).hasSize(1);
            String key = keys.keySet().iterator().next();
            RedisTestServer master = keys.get(key);
            master.command("SCRIPT", "FLUSH");
            master.resetStats();

            long flushedAt = System.nanoTime();
            await().pollInterval(Duration.ofMillis(200)).atMost(Duration.ofSeconds(30)).until(() -> {
                assertThat(held.isHeld()).as("held").isTrue();
                assertThat(master.pttl(key)).as("lease left, ms").isPositive();
                return System.nanoTime() - flushedAt > ttl.multipliedBy(3).dividedBy(2).toNanos();
            });

            assertThat(master.commandCalls("script|load")).as("SCRIPT LOAD on the master").isPositive();
            assertThat(master.commandCalls("evalsha")).as("renewals by EVALSHA").isPositive();
            assertThat(master.commandCalls("eval")).as("renewals by EVAL, one per slot").isZero();
            assertThat(held.release()).isTrue();
        }
    }

    @Test
    void theInstancesRunOnJedisAndTheSpringDataBackend() {
        try (LockApplication app = startInstance()) {
            assertThat(app.bean(RedisConnectionFactory.class)).isInstanceOf(JedisConnectionFactory.class);
            assertThat(app.bean(LockBackend.class)).isInstanceOf(SpringDataLockBackend.class);
        }
    }

}
