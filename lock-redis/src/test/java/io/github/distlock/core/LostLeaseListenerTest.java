package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Lost-lease listeners run off the watchdog's thread: a slow listener (an
 * {@code @EventListener} that writes to a database, say) must not delay the renewal of
 * every other lease.
 */
class LostLeaseListenerTest {

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    @Test
    void aSlowLostLeaseListenerDoesNotStopOtherLeasesFromBeingRenewed() throws Exception {
        RedisTestServer redis = redisExtension.server();
        CountDownLatch listenerMayReturn = new CountDownLatch(1);
        try (LockServiceConnection instance = new LockServiceConnection(redis)) {
            LockHandle lost = instance.service.lock("lost", Duration.ofMillis(600), Duration.ZERO);
            lost.onLost(handle -> {
                try {
                    listenerMayReturn.await();
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            });
            LockHandle kept = instance.service.lock("kept", Duration.ofMillis(600), Duration.ZERO);
            redis.del("lock:{lost}");
            await().atMost(Duration.ofSeconds(20)).until(lost::isLost);

            // Several of kept's leases long, while the lost lease's listener still
            // blocks.
            await().during(Duration.ofMillis(2_000)).atMost(Duration.ofSeconds(20)).until(kept::isHeld);
            assertThat(redis.pttl("lock:{kept}")).isPositive();
            assertThat(kept.isLost()).isFalse();

            listenerMayReturn.countDown();
            assertThat(kept.release()).isTrue();
        }
        finally {
            listenerMayReturn.countDown();
        }
    }

}
