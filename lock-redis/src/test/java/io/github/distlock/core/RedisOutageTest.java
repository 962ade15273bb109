package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * What the lock does when Redis goes away: fail fast within the operation timeout,
 * whatever the client's own timeout, and tell the holder its lease is gone.
 */
class RedisOutageTest {

    private static final Duration OPERATION_TIMEOUT = Duration.ofMillis(500);

    RedisTestServer redis;

    LockServiceConnection instance;

    /** The driver under test; a subclass runs these same tests on another one. */
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.LETTUCE;
    }

    @BeforeEach
    void start() {
        redis = RedisTestServer.start();
        instance = new LockServiceConnection(driver(), redis.host(), redis.port(), OPERATION_TIMEOUT, true,
                backend -> backend);
        // Establish the shared connection first, as a running application has; a cold
        // connect on a busy
        // machine can take longer than the 500 ms operation timeout, so it is retried.
        instance.awaitConnected();
        await().atMost(Duration.ofSeconds(30))
            .ignoreExceptions()
            .until(() -> instance.service.tryLock("warm-up", null, Duration.ZERO)
                .map(LockHandle::release)
                .orElse(false));
    }

    @AfterEach
    void stop() throws Exception {
        instance.close();
        redis.close();
    }

    @Test
    void acquireFailsWithLockBackendExceptionWithinTheOperationTimeoutWhenRedisIsStopped() {
        redis.stop();

        long started = System.nanoTime();
        assertThatThrownBy(() -> instance.service.tryLock("order:1", null, Duration.ofSeconds(30)))
            .isInstanceOf(LockBackendException.class)
            .hasMessageContaining("order:1");
        // The client's own timeout is 60 s; only ours can have ended it this soon, even
        // on a stalled machine.
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void acquireFailsWithinTheOperationTimeoutWhenRedisHangs() {
        redis.pause();

        long started = System.nanoTime();
        assertThatThrownBy(() -> instance.service.tryLock("order:2", null, Duration.ofSeconds(30)))
            .isInstanceOf(LockBackendException.class)
            .hasMessageContaining("operation-timeout");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
        redis.resume();
    }

    @Test
    void shutdownDoesNotWaitForASubscriptionStuckConnectingToAHungRedis() throws Exception {
        redis.pause();
        // The first wait's question starts the release subscription in the background.
        assertThat(instance.subscriber.startListening()).isFalse();
        // Its connection handshake now hangs for the client's 60 s command timeout,
        // holding the
        // listener container's lock that the container's stop waits for.
        await().atMost(Duration.ofSeconds(10))
            .until(() -> threadIsIn("distributed-lock-subscribe", "io.lettuce.core.RedisClient", "connect"));

        long started = System.nanoTime();
        instance.subscriber.close();

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
        assertThat(redis.isPaused()).as("Redis still hangs: close did not wait for it").isTrue();
        redis.resume();
    }

    private static boolean threadIsIn(String threadName, String className, String methodName) {
        return Thread.getAllStackTraces()
            .entrySet()
            .stream()
            .filter(thread -> thread.getKey().getName().equals(threadName))
            .flatMap(thread -> java.util.Arrays.stream(thread.getValue()))
            .anyMatch(frame -> frame.getClassName().equals(className) && frame.getMethodName().equals(methodName));
    }

    @ParameterizedTest(name = "fencing token up front: {0}")
    @ValueSource(booleans = { false, true })
    void anAcquireThatTimedOutIsUndoneSoTheKeyDoesNotBlockOthersForAWholeTtl(boolean fencingTokenUpFront) {
        // Without the token up front the attempt is a bare SET; with it, the acquire
        // script.
        LockRequest request = LockRequest.of("order:3").withTtl(Duration.ofMinutes(5)).withWaitTime(Duration.ZERO);
        redis.pause();
        assertThatThrownBy(() -> instance.service.tryLock(fencingTokenUpFront ? request.withFencingToken() : request))
            .isInstanceOf(LockBackendException.class);

        redis.resume();

        // Whether or not the SET was applied, the key must not stay behind for 5 minutes.
        await().atMost(Duration.ofSeconds(20)).until(() -> redis.get("lock:{order:3}") == null);
        assertThat(instance.service.tryLock("order:3", null, Duration.ofSeconds(2))).isPresent();
    }

    @Test
    void watchdogMarksTheLeaseLostWhenRedisStaysDownLongerThanTheTtl() {
        LockHandle handle = instance.service.lock(LockRequest.of("order:4").withTtl(Duration.ofMillis(600)));

        redis.stop();

        await().atMost(Duration.ofSeconds(20)).until(() -> !handle.isHeld());
        // The watchdog gives up on the lease once its retries have run past the deadline.
        await().atMost(Duration.ofSeconds(20)).until(() -> instance.watchdog.watchedLeases() == 0);
    }

    @Test
    void leaseSurvivesAnOutageShorterThanTheTtl() {
        // An outage of half the lease, over the renewal due after a third of it: a stall
        // of a busy machine on top
        // still leaves the lease time.
        LockHandle handle = instance.service.lock(LockRequest.of("order:5").withTtl(Duration.ofSeconds(6)));

        redis.pause();
        await().pollDelay(Duration.ofMillis(3000)).until(() -> true);
        assertThat(handle.isHeld()).isTrue();
        redis.resume();

        // More left than the 3 s the pause could leave: renewed after the outage.
        await().atMost(Duration.ofSeconds(20)).until(() -> redis.pttl("lock:{order:5}") > 5000);
        assertThat(handle.isHeld()).isTrue();
        assertThat(handle.release()).isTrue();
    }

    @Test
    void locksWorkAgainAfterARestartThatFlushedTheScriptCache() {
        redis.kill();
        redis.restart();

        // The acquire, fence and release scripts each meet a server that has never seen
        // them.
        await().atMost(Duration.ofSeconds(10))
            .ignoreExceptions()
            .until(() -> instance.service
                .tryLock(LockRequest.of("order:6").withWaitTime(Duration.ZERO).withFencingToken())
                .isPresent());
        assertThat(redis.get("lock:{order:6}")).matches("[0-9a-f]{32}");
        LockHandle bare = instance.service.lock("order:7", null, Duration.ZERO);
        assertThat(bare.fencingToken()).isPositive();
        assertThat(bare.release()).isTrue();
        assertThat(redis.get("lock:{order:7}")).isNull();
    }

    @Test
    void aFencingTokenRequestFailsWithLockBackendExceptionWhileRedisIsDown() {
        LockHandle handle = instance.service.lock("order:8", null, Duration.ZERO);
        redis.stop();

        assertThatThrownBy(handle::fencingToken).isInstanceOf(LockBackendException.class)
            .hasMessageContaining("fencing token of lock 'order:8'");
        assertThat(handle.issuedFencingToken()).isEmpty();
    }

}
