package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Predicate;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.FaultRule;
import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.RespConnection;

/**
 * On a Jedis connection factory ({@code SpringDataLockBackend}), a lock command that
 * reaches Redis only after its caller gave up on it: the proxy holds it back
 * ({@link FaultRule.Builder#delayCommand}) past the operation timeout, so it is already
 * under way on its pooled connection when the caller undoes it on another one. The undo
 * must run after it, never before, or the late command leaves a lock (or a waiter the
 * lock is handed to) that nobody owns.
 */
class JedisLateCommandTest {

    private static final String KEY = "late";

    private static final String LOCK = "lock:{late}";

    private static final Duration OPERATION_TIMEOUT = Duration.ofMillis(200);

    /**
     * Far past the operation timeout, and far below the lease: a key left behind would
     * outlive any await here.
     */
    private static final Duration HOLD = Duration.ofSeconds(1);

    private static final Duration TTL = Duration.ofSeconds(30);

    private static final Duration LEFT_BEHIND = Duration.ofSeconds(10);

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisTestServer redis;

    private RedisFaultProxy proxy;

    private LockServiceConnection proxied;

    private LockServiceConnection direct;

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        proxy = RedisFaultProxy.start(redis);
        proxied = new LockServiceConnection(LockServiceConnection.Driver.JEDIS, proxy.host(), proxy.port(),
                OPERATION_TIMEOUT, false, backend -> backend);
        direct = new LockServiceConnection(LockServiceConnection.Driver.JEDIS, redis.host(), redis.port(),
                Duration.ofSeconds(2), false, backend -> backend);
        // A cold connect can take longer than 200 ms. Loads the acquire script too, so
        // that the faults below hit
        // an EVALSHA that runs, not one that comes back NOSCRIPT and is followed by an
        // EVAL.
        await().atMost(Duration.ofSeconds(30))
            .ignoreException(LockBackendException.class)
            .until(() -> proxied.service
                .tryLock(LockRequest.of("warm-up").withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken())
                .map(LockHandle::release)
                .orElse(false));
        direct.awaitConnected();
    }

    @AfterEach
    void disconnect() throws Exception {
        proxy.heal();
        proxied.close();
        direct.close();
        proxy.close();
    }

    /**
     * Before the fix the undo's release ran at once, on another pooled connection, found
     * nothing to release, and the held acquire then set {@code lock:{late}} for its whole
     * 30 s lease: nobody could take the lock.
     */
    @ParameterizedTest(name = "held: {0}")
    @EnumSource(value = LockCommand.class, names = { "BARE_ACQUIRE", "ACQUIRE_SCRIPT" })
    void anAcquireThatReachesRedisAfterItsCallTimedOutIsUndoneAfterItRan(LockCommand held) throws IOException {
        FaultRule hold = proxy.onNext(held.on(LOCK)).delayCommand(HOLD);
        LockRequest request = LockRequest.of(KEY).withTtl(TTL).withWaitTime(Duration.ZERO).withWatchdog(false);
        LockRequest asked = held == LockCommand.ACQUIRE_SCRIPT ? request.withFencingToken() : request;

        try (RespConnection monitor = monitor()) {
            assertThatThrownBy(() -> proxied.service.tryLock(asked)).isInstanceOf(LockBackendException.class)
                .hasMessageContaining("did not answer");
            assertThat(hold.triggerCount()).isEqualTo(1);
            awaitRun(monitor, held == LockCommand.BARE_ACQUIRE ? clientSetNx() : scriptSetNx());
        }

        await().atMost(LEFT_BEHIND)
            .untilAsserted(
                    () -> assertThat(redis.get(LOCK)).as("the late acquire's key, undone after it ran").isNull());
        Optional<LockHandle> other = direct.service.tryLock(KEY, TTL, Duration.ZERO);
        assertThat(other).as("another client takes the lock").isPresent();
        other.get().release();
    }

    /**
     * A waiter's queued attempt reaches Redis after its call timed out and its undo left
     * the queue: before the fix it queued a waiter that no call stood behind any more,
     * and the holder's release handed the lock to it.
     */
    @Test
    void aQueuedAttemptThatReachesRedisAfterItsCallTimedOutLeavesNoWaiterToHandTheLockTo() throws IOException {
        LockHandle holder = direct.service
            .lock(LockRequest.of(KEY).withTtl(TTL).withWaitTime(Duration.ZERO).withWatchdog(false));
        FaultRule hold = proxy.onNext(LockCommand.ACQUIRE_SCRIPT.on(LOCK)).delayCommand(HOLD);

        try (RespConnection monitor = monitor()) {
            // The bare SET finds the lock held; the queued acquire.lua after it is the
            // one held back.
            assertThatThrownBy(() -> proxied.service.tryLock(KEY, TTL, Duration.ofSeconds(5)))
                .isInstanceOf(LockBackendException.class);
            assertThat(hold.triggerCount()).isEqualTo(1);
            awaitRun(monitor, scriptSetNx());
        }
        assertThat(holder.release()).isTrue();

        await().atMost(LEFT_BEHIND)
            .untilAsserted(() -> assertThat(redis.get(LOCK)).as("released, not handed to a waiter nobody stands behind")
                .isNull());
        Optional<LockHandle> other = direct.service.tryLock(KEY, TTL, Duration.ZERO);
        assertThat(other).as("another client takes the lock").isPresent();
        other.get().release();
    }

    /**
     * The backend's side of it, one call at a time: while the acquire is still held back,
     * an undo of its token (leaving the queue, releasing) is not sent and fails as a
     * timeout, so that the caller retries it; once the acquire has run, the same undo
     * removes what it left.
     */
    @Test
    void anUndoOfATokenWhoseAcquireIsStillUnderWayIsNotSentAndFailsAsATimeout() throws IOException {
        LockHandle holder = direct.service
            .lock(LockRequest.of(KEY).withTtl(TTL).withWaitTime(Duration.ZERO).withWatchdog(false));
        QueueingLockBackend backend = (QueueingLockBackend) proxied.backend;
        LockKey key = backend.lockKey(KEY);
        String token = "0123456789abcdef0123456789abcdef";
        long ttlMillis = TTL.toMillis();
        // Long enough that both undos below surely time out before it ends, even on a
        // busy machine.
        proxy.onNext(LockCommand.ACQUIRE_SCRIPT.on(LOCK)).delayCommand(Duration.ofSeconds(5));

        try (RespConnection monitor = monitor()) {
            assertThatThrownBy(() -> backend.tryAcquire(key, token, ttlMillis, 3_000, false, false))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("did not answer");
            long scriptsSent = proxy.commandCount("EVALSHA") + proxy.commandCount("EVAL");

            assertThatThrownBy(() -> backend.stopWaiting(key, token, ttlMillis))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("still under way");
            assertThatThrownBy(() -> backend.release(key, token)).isInstanceOf(LockBackendException.class)
                .hasMessageContaining("still under way");
            assertThat(proxy.commandCount("EVALSHA") + proxy.commandCount("EVAL")).as("neither undo was sent")
                .isEqualTo(scriptsSent);
            awaitRun(monitor, scriptSetNx());
        }
        assertThat(redis.command("HLEN", LOCK + ":waiting")).as("the late acquire queued the token").isEqualTo(1L);

        await().atMost(LEFT_BEHIND)
            .ignoreException(LockBackendException.class)
            .until(() -> !backend.stopWaiting(key, token, ttlMillis).acquired());
        assertThat(redis.command("HLEN", LOCK + ":waiting")).isEqualTo(0L);
        assertThat(backend.release(key, token)).as("never held").isFalse();
        assertThat(holder.release()).isTrue();
        assertThat(redis.get(LOCK)).as("released, not handed to the token").isNull();
    }

    /**
     * Only an undo of the late command's own token waits for it: the release of another
     * lock goes ahead.
     */
    @Test
    void aLateCommandHoldsUpNoReleaseOfAnotherLock() throws IOException {
        LockHandle other = proxied.service
            .lock(LockRequest.of("other").withTtl(TTL).withWaitTime(Duration.ZERO).withWatchdog(false));
        proxy.onNext(LockCommand.BARE_ACQUIRE.on(LOCK)).delayCommand(Duration.ofSeconds(5));

        try (RespConnection monitor = monitor()) {
            assertThatThrownBy(() -> proxied.service.tryLock(KEY, TTL, Duration.ZERO))
                .isInstanceOf(LockBackendException.class);

            assertThat(other.release()).as("released while the late SET is still held back").isTrue();
            assertThat(redis.get("lock:{other}")).isNull();
            assertThat(redis.get(LOCK)).as("the held SET has not reached Redis yet").isNull();
            awaitRun(monitor, clientSetNx());
        }
        await().atMost(LEFT_BEHIND).untilAsserted(() -> assertThat(redis.get(LOCK)).isNull());
    }

    /**
     * Redis's own feed of the commands it runs, from now on: a line there means the
     * command has run.
     */
    private RespConnection monitor() throws IOException {
        RespConnection monitor = RespConnection.open(redis.host(), redis.port(), LEFT_BEHIND);
        assertThat(monitor.command("MONITOR")).isEqualTo("OK");
        return monitor;
    }

    /** Reads the feed until a command matches; fails if none does in time. */
    private static void awaitRun(RespConnection monitor, Predicate<String> command) throws IOException {
        long deadline = System.nanoTime() + LEFT_BEHIND.toNanos();
        while (System.nanoTime() - deadline < 0) {
            // e.g. 1700000000.123456 [0 127.0.0.1:41234] "SET" "lock:{late}" "<token>"
            // "NX" "PX" "30000" "GET"
            String line = String.valueOf(monitor.readReply()).toUpperCase(Locale.ROOT);
            if (command.test(line)) {
                return;
            }
        }
        throw new AssertionError("Redis did not run the held command");
    }

    /** The bare acquire, sent by the client. */
    private static Predicate<String> clientSetNx() {
        return line -> !line.contains(" LUA]") && isSetNx(line);
    }

    /**
     * The {@code SET NX} inside acquire.lua; a hand-over's {@code SET} has no {@code NX}.
     */
    private static Predicate<String> scriptSetNx() {
        return line -> line.contains(" LUA]") && isSetNx(line);
    }

    private static boolean isSetNx(String line) {
        return line.contains("\"SET\" \"" + LOCK.toUpperCase(Locale.ROOT) + "\"") && line.contains("\"NX\"");
    }

}
