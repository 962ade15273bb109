package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * When the fencing counter {@code <prefix>{<key>}:fence} exists, as the guide's "Fencing
 * tokens" section explains it: never for a lock only ever taken while free without asking
 * for a token; after a waiter got the lock, for a day, because the token drawn for it (by
 * the hand-over) is the new holder's and every later token must be above it.
 */
class FencingCounterTest {

    private static final long ONE_DAY_MILLIS = TimeUnit.DAYS.toMillis(1);

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisTestServer redis;

    private LockServiceConnection instanceA;

    private LockServiceConnection instanceB;

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        instanceA = connection();
        instanceB = connection();
    }

    /**
     * A generous operation timeout: nothing here is timed, and a loaded machine may be
     * slow to connect.
     */
    private LockServiceConnection connection() {
        return new LockServiceConnection(LockServiceConnection.Driver.LETTUCE, redis.host(), redis.port(),
                Duration.ofSeconds(15), true, backend -> backend);
    }

    @AfterEach
    void disconnect() throws Exception {
        instanceA.close();
        instanceB.close();
    }

    @Test
    void locksTakenWhileFreeWithoutAskingForATokenLeaveNoFencingCounter() {
        for (int i = 0; i < 5; i++) {
            LockServiceConnection instance = i % 2 == 0 ? instanceA : instanceB;
            try (LockHandle lock = instance.service.lock("report", null, Duration.ofSeconds(5))) {
                assertThat(lock.isHeld()).isTrue();
            }
        }

        assertThat(redis.get("lock:{report}:fence")).isNull();
        assertThat(redis.dbSize()).as("keys left in Redis").isZero();
    }

    @Test
    void aLockThatWasWaitedForKeepsAFencingCounterForADayThatOrdersEveryLaterToken() throws Exception {
        LockHandle first = instanceA.service.lock("order:7", null, Duration.ZERO);
        CompletableFuture<Optional<LockHandle>> waiter = CompletableFuture
            .supplyAsync(() -> instanceB.service.tryLock("order:7", null, Duration.ofSeconds(30)));
        // The waiter is in the queue in Redis: the release hands the lock to it rather
        // than deleting it.
        await().atMost(Duration.ofSeconds(30))
            .until(() -> "1".equals(String.valueOf(redis.command("ZCARD", "lock:{order:7}:queue"))));

        assertThat(first.release()).isTrue();
        LockHandle second = waiter.get(30, TimeUnit.SECONDS).orElseThrow();

        // Neither holder asked for a token, yet waiting drew one (the hand-over, or the
        // waiter's own attempt if it
        // missed the hand-over's message): it is the second holder's fencing token.
        assertThat(first.issuedFencingToken()).isEmpty();
        assertThat(second.issuedFencingToken()).isPresent();
        long handedOver = second.issuedFencingToken().getAsLong();
        assertThat(redis.get("lock:{order:7}:fence")).isEqualTo(Long.toString(handedOver));
        assertThat(redis.pttl("lock:{order:7}:fence")).as("the counter's remaining life, in ms")
            .isGreaterThan(ONE_DAY_MILLIS - TimeUnit.HOURS.toMillis(1))
            .isLessThanOrEqualTo(ONE_DAY_MILLIS);
        assertThat(second.release()).isTrue();
        assertThat(redis.get("lock:{order:7}:fence")).as("the counter outlives the lock").isNotNull();

        try (LockHandle third = instanceA.service.lock(LockRequest.of("order:7").withFencingToken())) {
            assertThat(third.fencingToken()).isGreaterThan(handedOver);
        }
    }

}
