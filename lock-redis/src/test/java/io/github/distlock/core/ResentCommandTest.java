package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.RedisCommandMatcher;
import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Lettuce re-sends a command whose reply a dropped connection lost (at-least-once), so
 * every lock command runs once, twice, or without its reply reaching us, and must be
 * right in each case. The proxy lets Redis run the command, drops the reply and closes
 * the connection; Lettuce reconnects and sends it again. A release whose reply was lost
 * is {@link LostReleaseReplyTest}'s, on both drivers.
 */
class ResentCommandTest {

    private static final String LOCK = "lock:{resent}";

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisTestServer redis;

    private RedisFaultProxy proxy;

    private LockServiceConnection instance;

    private LockServiceConnection other;

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        proxy = RedisFaultProxy.start(redis);
        instance = new LockServiceConnection(proxy.host(), proxy.port(), Duration.ofSeconds(2), true,
                backend -> backend);
        other = new LockServiceConnection(redis);
        // Connected and scripts cached before the faults: these tests are about the lock
        // commands.
        instance.service.lock(LockRequest.of("warm-up").withFencingToken().withWaitTime(Duration.ZERO)).release();
    }

    @AfterEach
    void disconnect() throws Exception {
        instance.close();
        other.close();
        proxy.close();
    }

    @Test
    void aFreeLockWhoseSetReplyWasLostIsStillAcquiredWhenLettuceResendsTheSet() {
        proxy.onNext(RedisCommandMatcher.named("SET").withArgument(1, LOCK)).dropReplyAndClose();

        Optional<LockHandle> acquired = instance.service.tryLock("resent", Duration.ofSeconds(30), Duration.ZERO);

        assertThat(proxy.commandCount("SET")).isEqualTo(2); // sent, and re-sent after the
                                                            // reconnect
        assertThat(acquired).isPresent();
        assertThat(acquired.get().isHeld()).isTrue();
        assertThat(other.service.tryLock("resent", Duration.ofSeconds(30), Duration.ZERO)).isEmpty();
        assertThat(acquired.get().release()).isTrue();
        assertThat(redis.get(LOCK)).isNull();
    }

    @Test
    void aWaitingCallerWhoseSetWasResentGetsAFreshFencingTokenNotThePreviousHolders() {
        LockHandle previous = other.service
            .lock(LockRequest.of("resent").withWaitTime(Duration.ZERO).withFencingToken());
        long previousToken = previous.fencingToken();
        assertThat(previous.release()).isTrue();
        proxy.onNext(RedisCommandMatcher.named("SET").withArgument(1, LOCK)).dropReplyAndClose();

        LockHandle acquired = instance.service.lock("resent", Duration.ofSeconds(30), Duration.ofSeconds(5));

        assertThat(acquired.fencingToken()).isGreaterThan(previousToken);
        assertThat(acquired.release()).isTrue();
    }

    @Test
    void anAcquireScriptWhoseReplyWasLostIsStillAcquiredWithAFreshToken() {
        LockHandle previous = other.service
            .lock(LockRequest.of("resent").withWaitTime(Duration.ZERO).withFencingToken());
        long previousToken = previous.fencingToken();
        assertThat(previous.release()).isTrue();
        // With the token asked for up front, the first attempt is the acquire script.
        proxy.onNext(RedisCommandMatcher.named("EVALSHA")).dropReplyAndClose();

        Optional<LockHandle> acquired = instance.service.tryLock(LockRequest.of("resent")
            .withTtl(Duration.ofSeconds(30))
            .withWaitTime(Duration.ZERO)
            .withFencingToken());

        assertThat(proxy.commandCount("EVALSHA")).isGreaterThanOrEqualTo(4); // warm-up 2,
                                                                             // then this
                                                                             // one twice
        assertThat(acquired).isPresent();
        assertThat(acquired.get().fencingToken()).isGreaterThan(previousToken);
        assertThat(acquired.get().release()).isTrue();
        assertThat(redis.get(LOCK)).isNull();
    }

    @Test
    void aReleaseWhoseReplyNeverCameIsRetriedUntilTheKeyIsFree() {
        LockHandle handle = instance.service.lock("resent", Duration.ofSeconds(30), Duration.ZERO);
        // Redis never sees the release: the connection is a black hole until healed.
        proxy.blackhole();
        try {
            handle.release();
        }
        catch (RuntimeException expected) {
            // LockBackendException: Redis did not answer within the operation timeout.
        }
        assertThat(redis.get(LOCK)).isNotNull();

        proxy.heal();

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(redis.get(LOCK)).isNull());
    }

    @Test
    void anAcquireWhoseReplyNeverCameIsUndoneOnceRedisAnswersAgain() {
        // Redis runs the SET, but its reply, and everything after it on that connection,
        // is lost
        // until the connection is closed: the caller times out not knowing it holds the
        // lock.
        proxy.onNext(RedisCommandMatcher.named("SET").withArgument(1, LOCK)).dropReplyAndHang();
        try {
            instance.service.tryLock("resent", Duration.ofSeconds(30), Duration.ZERO);
        }
        catch (RuntimeException expected) {
            // LockBackendException: no reply within the operation timeout.
        }
        assertThat(redis.get(LOCK)).isNotNull();

        proxy.heal();

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(redis.get(LOCK)).isNull());
        assertThat(other.service.tryLock("resent", Duration.ofSeconds(30), Duration.ZERO)).isPresent();
    }

}
