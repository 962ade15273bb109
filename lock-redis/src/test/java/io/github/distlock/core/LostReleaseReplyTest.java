package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.LockServiceConnection.Driver;
import io.github.distlock.testsupport.FaultRule;
import io.github.distlock.testsupport.RedisCommandMatcher;
import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * A release that Redis ran but whose reply a dropped connection lost, on both drivers.
 * The proxy lets Redis run {@code release.lua}, drops its reply and closes the
 * connection; the client (Lettuce by itself, the Spring Data transport once on its own)
 * sends it again, and the second delivery finds the lock no longer ours: its first
 * delivery deleted it. The holder held the lock until that release, so the release counts
 * as released. It used to on Lettuce only; on Jedis the lost reply failed the release.
 */
class LostReleaseReplyTest {

    private static final String LOCK = "lock:{resent}";

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisFaultProxy proxy;

    private LockServiceConnection instance;

    private LockServiceConnection other;

    @AfterEach
    void disconnect() throws Exception {
        if (instance != null) {
            instance.close();
        }
        if (other != null) {
            other.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Driver.class)
    void aReleaseWhoseReplyWasLostIsSentAgainAndReportsReleased(Driver driver) {
        RedisTestServer redis = redisExtension.server();
        proxy = RedisFaultProxy.start(redis);
        instance = new LockServiceConnection(driver, proxy.host(), proxy.port(), Duration.ofSeconds(2), true,
                backend -> backend)
            .awaitConnected();
        other = new LockServiceConnection(driver, redis);
        // Scripts cached before the fault: the release is one EVALSHA, not EVALSHA and
        // EVAL.
        instance.service.lock(LockRequest.of("warm-up").withWaitTime(Duration.ZERO)).release();
        LockHandle handle = instance.service.lock("resent", Duration.ofSeconds(30), Duration.ZERO);
        long sentBefore = proxy.commandCount("EVALSHA");
        FaultRule lostReply = proxy.onNext(RedisCommandMatcher.named("EVALSHA").withArgument(3, LOCK))
            .dropReplyAndClose();

        boolean released = handle.release();

        assertThat(lostReply.triggerCount()).as("the fault hit").isEqualTo(1);
        assertThat(proxy.commandCount("EVALSHA") - sentBefore).as("sent, and sent again").isEqualTo(2);
        assertThat(released).isTrue();
        assertThat(instance.events.of("resent")).last().isEqualTo("released resent released");
        assertThat(redis.get(LOCK)).isNull();
        assertThat(other.service.tryLock("resent", Duration.ofSeconds(30), Duration.ZERO)).isPresent();
    }

}
