package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.LockBackend.AcquireResult;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * The JVM never believes it holds a lock longer than Redis does: however the lock was
 * obtained, the handle's lease ends no later than the key's expiry in Redis.
 */
class LeaseAccountingTest {

    private static final String LOCK = "lock:{lease}";

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisTestServer redis;

    private LockServiceConnection holder;

    private LockServiceConnection waiter;

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        holder = new LockServiceConnection(redis);
    }

    @AfterEach
    void disconnect() throws Exception {
        holder.close();
        if (waiter != null) {
            waiter.close();
        }
    }

    @Test
    void aHandOverFoundByALatePollEndsItsLeaseNoLaterThanRedisDoes() throws Exception {
        LockHandle held = holder.service.lock("lease", Duration.ofSeconds(30), Duration.ZERO);
        // The waiter trusts wake-ups (so it re-checks only about once a second) but its
        // hand-over
        // message is lost; the release lands just after its first queued attempt, so it
        // finds the
        // hand-over by its next poll, about a second after Redis started the lease.
        AtomicBoolean released = new AtomicBoolean();
        waiter = new LockServiceConnection(redis, Duration.ofSeconds(2), false,
                backend -> new CountingBackend(backend) {
                    @Override
                    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis,
                            boolean queued, boolean fencingToken) {
                        AcquireResult attempt = super.tryAcquire(key, token, ttlMillis, queueMillis, queued,
                                fencingToken);
                        if (!attempt.acquired() && released.compareAndSet(false, true)) {
                            held.release();
                        }
                        return attempt;
                    }
                });
        waiter.subscriber.stop();
        waiter.waiters.notificationsFrom(() -> true, () -> true);

        CompletableFuture<Optional<LockHandle>> waiting = CompletableFuture
            .supplyAsync(() -> waiter.service.tryLock(LockRequest.of("lease")
                .withTtl(Duration.ofSeconds(4))
                .withWaitTime(Duration.ofSeconds(20))
                .withWatchdog(false)
                .withFencingToken()));
        LockHandle handle = waiting.get(10, TimeUnit.SECONDS).orElseThrow();
        assertThat(handle.isHeld()).isTrue();

        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> redis.get(LOCK) == null);
        assertThat(handle.isHeld()).isFalse();
    }

}
