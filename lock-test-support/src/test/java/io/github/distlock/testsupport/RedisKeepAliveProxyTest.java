package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.event.connection.ConnectionDeactivatedEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RedisKeepAliveProxy}: the client's connection survives a restart and a switch of
 * the server behind the proxy, its session comes along, and what was in flight fails
 * visibly. Real redis-server processes, a raw RESP client, and Lettuce (the client the
 * lock library runs on).
 */
class RedisKeepAliveProxyTest {

    private static final Duration ANSWERED = Duration.ofSeconds(5);

    private RedisTestServer primary;

    private RedisKeepAliveProxy proxy;

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void startServerAndProxy() {
        primary = RedisTestServer.start();
        proxy = RedisKeepAliveProxy.start(primary);
    }

    @AfterEach
    void closeEverything() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        proxy.close();
        primary.close();
    }

    @Test
    void lettuceKeepsItsOneConnectionAcrossARestartAndTalksToTheEmptyRestartedServer() {
        RedisClient client = lettuce(RedisURI.builder().withHost(proxy.host()).withPort(proxy.port()).build());
        List<Object> deactivations = recordDeactivations(client);
        RedisCommands<String, String> commands = connect(client).sync();
        commands.set("lock:{a}", "token-1");
        String runIdBefore = runId(commands);

        proxy.restartUpstream();

        assertThat(runId(commands)).isNotEqualTo(runIdBefore).isEqualTo(primary.infoValue("server", "run_id"));
        assertThat(commands.get("lock:{a}")).as("the restarted server is empty").isNull();
        assertThat(proxy.acceptedConnections()).as("Lettuce never reconnected to the proxy").isEqualTo(1);
        assertThat(deactivations).as("Lettuce saw no disconnect").isEmpty();
        assertThat(proxy.upstreamConnects()).isEqualTo(2);
    }

    @Test
    void switchUpstreamMovesTheSameConnectionToAnotherServer() {
        RedisTestServer standby = closeLater(RedisTestServer.start());
        standby.set("lock:{a}", "standby's");
        RedisClient client = lettuce(RedisURI.builder().withHost(proxy.host()).withPort(proxy.port()).build());
        RedisCommands<String, String> commands = connect(client).sync();
        commands.set("lock:{a}", "primary's");

        proxy.switchUpstream(standby);

        assertThat(proxy.upstream()).isSameAs(standby);
        assertThat(commands.get("lock:{a}")).isEqualTo("standby's");
        assertThat(runId(commands)).isEqualTo(standby.infoValue("server", "run_id"));
        assertThat(primary.get("lock:{a}")).isEqualTo("primary's");
        assertThat(proxy.acceptedConnections()).isEqualTo(1);
    }

    @Test
    void theSessionLettuceSetUpOnConnectIsReplayedOnTheNewServer() throws IOException {
        RedisTestServer standby = closeLater(RedisTestServer.start());
        RedisClient client = lettuce(RedisURI.builder()
            .withHost(proxy.host())
            .withPort(proxy.port())
            .withDatabase(3)
            .withClientName("contender-a")
            .build());
        RedisCommands<String, String> commands = connect(client).sync();
        assertThat(commands.clientInfo()).contains("resp=3", "db=3", "name=contender-a");

        proxy.switchUpstream(standby);

        // HELLO 3 (with SETNAME) and SELECT 3 reached the standby before the client's
        // next command did.
        assertThat(commands.clientInfo()).contains("resp=3", "db=3", "name=contender-a");
        commands.hset("h", "field", "value");
        assertThat(commands.hgetall("h")).containsEntry("field", "value"); // a RESP3 map,
                                                                           // parsed as
                                                                           // one
        RespConnection onStandby = closeLater(standby.openConnection());
        assertThat(onStandby.command("EXISTS", "h")).as("not in database 0").isEqualTo(0L);
        onStandby.command("SELECT", "3");
        assertThat(onStandby.command("EXISTS", "h")).isEqualTo(1L);
    }

    @Test
    void anAuthSentOnConnectIsReplayedSoAPasswordProtectedStandbyServesTheClient() throws IOException {
        // Set after start: the fixture's own PING must get through while it waits for the
        // server.
        RedisTestServer secured = closeLater(RedisTestServer.start());
        RedisTestServer securedStandby = closeLater(RedisTestServer.start());
        secured.command("CONFIG", "SET", "requirepass", "s3cret");
        securedStandby.command("CONFIG", "SET", "requirepass", "s3cret");
        RedisKeepAliveProxy securedProxy = closeLater(RedisKeepAliveProxy.start(secured));
        RespConnection client = closeLater(RespConnection.open(securedProxy.host(), securedProxy.port(), ANSWERED));
        assertThat(client.command("AUTH", "s3cret")).isEqualTo("OK");

        securedProxy.switchUpstream(securedStandby);

        assertThat(client.command("SET", "lock:{a}", "token-1")).as("not NOAUTH").isEqualTo("OK");
        assertThat(securedProxy.acceptedConnections()).isEqualTo(1);
    }

    @Test
    void aCommandInFlightWhenTheUpstreamDropsGetsAnErrorReplyAndIsNotRetried() throws IOException {
        RespConnection client = raw();
        client.send("BLPOP", "queue", "0"); // blocks on Redis until the connection drops
        await().until(() -> primary.clientList().stream().anyMatch(line -> line.contains("cmd=blpop")));

        primary.kill();

        assertThatThrownBy(client::readReply).isInstanceOf(RedisErrorReplyException.class)
            .hasMessageContaining(
                    "RedisKeepAliveProxy lost its upstream connection before the reply; the command " + "may have run");
        primary.restart();
        await().ignoreExceptionsInstanceOf(RedisErrorReplyException.class)
            .until(() -> "PONG".equals(client.command("PING")));
        primary.command("RPUSH", "queue", "item");
        assertThat(primary.command("LLEN", "queue")).as("the BLPOP did not run again on the new server").isEqualTo(1L);
        assertThat(proxy.acceptedConnections()).isEqualTo(1);
    }

    @Test
    void commandsWhileTheServerIsDownGetAnErrorAndTheSameConnectionRecoversWhenItIsBack() throws IOException {
        RespConnection client = raw();
        assertThat(client.command("PING")).isEqualTo("PONG");

        primary.kill();

        await().untilAsserted(
                () -> assertThatThrownBy(() -> client.command("PING")).isInstanceOf(RedisErrorReplyException.class)
                    .hasMessageContaining("RedisKeepAliveProxy cannot reach its upstream 127.0.0.1:" + primary.port()));
        primary.restart();
        await().ignoreExceptionsInstanceOf(RedisErrorReplyException.class)
            .until(() -> "PONG".equals(client.command("PING")));
        assertThat(proxy.acceptedConnections()).isEqualTo(1);
        assertThat(proxy.openConnections()).isEqualTo(1);
    }

    @Test
    void aSessionTheNewServerRefusesClosesTheClientConnection() throws IOException {
        RedisTestServer smaller = closeLater(RedisTestServer.builder().args("--databases", "2").start());
        RespConnection client = raw();
        assertThat(client.command("SELECT", "5")).isEqualTo("OK");

        proxy.switchUpstream(smaller);

        // The replayed SELECT 5 failed there: carrying on in database 0 would be a silent
        // lie.
        assertThatThrownBy(() -> client.command("PING")).isInstanceOfAny(EOFException.class, SocketException.class);
        assertThat(proxy.openConnections()).isZero();
    }

    @Test
    void aSubscribedConnectionIsClosedWhenItsUpstreamGoesSoTheClientResubscribes() throws IOException {
        RespConnection subscriber = raw();
        subscriber.send("SUBSCRIBE", "lock-released");
        assertThat(subscriber.readReply()).isEqualTo(List.of("subscribe", "lock-released", 1L));
        RespConnection plain = raw();

        proxy.restartUpstream();

        assertThatThrownBy(subscriber::readReply).isInstanceOfAny(EOFException.class, SocketException.class);
        assertThat(plain.command("PING")).isEqualTo("PONG");
        assertThat(proxy.openConnections()).isEqualTo(1);
    }

    @Test
    void aFaultProxyInFrontAddsReplyFaultsAndTheKeepAliveStillHidesTheRestart() throws IOException {
        RedisFaultProxy faults = closeLater(RedisFaultProxy.start(proxy.host(), proxy.port()));
        RespConnection client = closeLater(RespConnection.open(faults.host(), faults.port(), ANSWERED));
        client.command("SET", "lock:{a}", "token-1");
        FaultRule delayedGet = faults.onNext(RedisCommandMatcher.named("GET")).delayReply(Duration.ofMillis(200));

        proxy.restartUpstream();

        assertThat(client.command("GET", "lock:{a}")).as("answered by the restarted, empty server").isNull();
        assertThat(delayedGet.triggerCount()).isEqualTo(1);
        assertThat(faults.acceptedConnections()).isEqualTo(1);
        assertThat(proxy.acceptedConnections()).isEqualTo(1);
    }

    private RespConnection raw() throws IOException {
        return closeLater(RespConnection.open(proxy.host(), proxy.port(), ANSWERED));
    }

    private RedisClient lettuce(RedisURI uri) {
        uri.setTimeout(ANSWERED);
        RedisClient client = RedisClient.create(uri);
        closeables.add(() -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        return client;
    }

    private StatefulRedisConnection<String, String> connect(RedisClient client) {
        return closeLater(client.connect());
    }

    private static List<Object> recordDeactivations(RedisClient client) {
        List<Object> deactivations = new CopyOnWriteArrayList<>();
        client.getResources()
            .eventBus()
            .get()
            .filter(event -> event instanceof ConnectionDeactivatedEvent)
            .subscribe(deactivations::add);
        return deactivations;
    }

    private static String runId(RedisCommands<String, String> commands) {
        return RedisTestServer.parseInfoField(commands.info("server"), "run_id");
    }

    private <T extends AutoCloseable> T closeLater(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

}
