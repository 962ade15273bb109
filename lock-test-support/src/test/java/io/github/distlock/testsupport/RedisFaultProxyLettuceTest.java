package io.github.distlock.testsupport;

import static io.github.distlock.testsupport.RedisCommandMatcher.named;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What Lettuce, the client the lock library runs on, does when {@link RedisFaultProxy}
 * loses a reply: the behaviour the lock commands must survive.
 */
class RedisFaultProxyLettuceTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private RedisFaultProxy proxy;

    private RedisClient client;

    private StatefulRedisConnection<String, String> connection;

    @BeforeEach
    void connectThroughTheProxy() {
        proxy = RedisFaultProxy.start(redis.server());
        client = RedisClient.create(RedisURI.builder()
            .withHost(proxy.host())
            .withPort(proxy.port())
            .withTimeout(Duration.ofSeconds(10))
            .build());
        connection = client.connect();
    }

    @AfterEach
    void close() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        proxy.close();
    }

    @Test
    void lettuceResendsASetNxWhoseReplyWasLostSoTheSecondRunReportsTheCallersOwnKeyAsTaken() {
        RedisCommands<String, String> commands = connection.sync();
        assertThat(proxy.commandCount("HELLO")).as("Lettuce speaks RESP3 through the proxy").isEqualTo(1);
        proxy.onNext(named("SET").withArgument(1, "lock:{a}")).dropReplyAndClose();

        String reply = commands.set("lock:{a}", "token-1", SetArgs.Builder.nx().px(30_000));

        // Redis ran the SET twice: once before the lost reply, once when Lettuce re-sent
        // it after reconnecting.
        assertThat(proxy.commandCount("SET")).isEqualTo(2);
        assertThat(proxy.acceptedConnections()).isEqualTo(2);
        assertThat(redis.server().get("lock:{a}")).isEqualTo("token-1");
        // The caller only sees the second run, whose NX failed on its own key.
        assertThat(reply).isNull();
    }

    @Test
    void lettuceTimesOutOnAHungConnectionAndRecoversOnceHealClosesIt() {
        RedisCommands<String, String> commands = connection.sync();
        commands.setTimeout(Duration.ofMillis(300));
        proxy.onNext(named("INCR")).dropReplyAndHang();

        assertThatThrownBy(() -> commands.incr("counter")).isInstanceOf(RedisCommandTimeoutException.class);
        assertThatThrownBy(() -> commands.incr("counter")).isInstanceOf(RedisCommandTimeoutException.class);

        proxy.heal();
        commands.setTimeout(Duration.ofSeconds(10));

        // The first INCR ran; the second never reached Redis; timed-out commands are not
        // re-sent on reconnect.
        assertThat(commands.incr("counter")).isEqualTo(2L);
        assertThat(proxy.commandCount("INCR")).isEqualTo(3);
    }

}
