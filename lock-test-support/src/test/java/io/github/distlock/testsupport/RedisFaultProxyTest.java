package io.github.distlock.testsupport;

import static io.github.distlock.testsupport.RedisCommandMatcher.named;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Each fault of {@link RedisFaultProxy}, proven with a raw RESP client through the proxy
 * and a look at the real Redis behind it. Delays are asserted as lower bounds only: a
 * loaded machine may always be slower.
 */
class RedisFaultProxyTest {

    /** Long enough that a reply which does come arrives even on a busy build machine. */
    private static final Duration ANSWERED = Duration.ofSeconds(5);

    /** A reply that must not come: waiting longer proves nothing more. */
    private static final Duration UNANSWERED = Duration.ofMillis(300);

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private RedisFaultProxy proxy;

    private final List<AutoCloseable> clients = new ArrayList<>();

    @BeforeEach
    void startProxy() {
        proxy = RedisFaultProxy.start(redis.server());
    }

    @AfterEach
    void closeClientsAndProxy() throws Exception {
        for (AutoCloseable client : clients) {
            client.close();
        }
        proxy.close();
    }

    @Test
    void forwardsCommandsAndRepliesUnchangedAndCountsThemByName() throws IOException {
        RespConnection client = connect(ANSWERED);

        assertThat(client.command("SET", "k", "v", "PX", "30000")).isEqualTo("OK");
        assertThat(client.command("get", "k")).isEqualTo("v");
        assertThat(client.command("MGET", "k", "missing")).isEqualTo(Arrays.asList("v", null));

        assertThat(proxy.commandCount("SET")).isEqualTo(1);
        assertThat(proxy.commandCount("get")).isEqualTo(1);
        assertThat(proxy.commandCount("DEL")).isZero();
        assertThat(proxy.acceptedConnections()).isEqualTo(1);
        assertThat(proxy.connections()).singleElement()
            .satisfies(connection -> assertThat(connection.isOpen()).isTrue())
            .satisfies(connection -> assertThat(connection.id()).isEqualTo(1));
        assertThat(proxy.port()).isNotEqualTo(redis.port()).isNotEqualTo(6379);
        assertThat(proxy.redisUri()).isEqualTo("redis://127.0.0.1:" + proxy.port());
    }

    @Test
    void dropReplyAndCloseExecutesTheCommandButTheClientNeverSeesTheReply() throws IOException {
        FaultRule rule = proxy.onNext(named("set").withArgument(1, "lock:{a}")).dropReplyAndClose();
        RespConnection client = connect(ANSWERED);

        assertThatThrownBy(() -> client.command("SET", "lock:{a}", "token-1", "NX", "PX", "30000"))
            .isInstanceOf(EOFException.class);

        assertThat(redis.server().get("lock:{a}")).isEqualTo("token-1");
        assertThat(rule.triggerCount()).isEqualTo(1);
        assertThat(rule.isUsedUp()).isTrue();
        await().atMost(ANSWERED).until(() -> proxy.connections().isEmpty());
        // A one-shot rule: the retry on a new connection gets its (now negative) answer.
        assertThat(connect(ANSWERED).command("SET", "lock:{a}", "token-1", "NX", "PX", "30000")).isNull();
        assertThat(proxy.commandCount("SET")).isEqualTo(2);
    }

    @Test
    void dropReplyAndHangLeavesTheClientWithoutRepliesAndStopsForwardingUntilHealCloses() throws IOException {
        proxy.onNext(named("SET")).dropReplyAndHang();
        RespConnection client = connect(UNANSWERED);

        assertThatThrownBy(() -> client.command("SET", "k", "v")).isInstanceOf(SocketTimeoutException.class);
        await().atMost(ANSWERED).untilAsserted(() -> assertThat(redis.server().get("k")).isEqualTo("v"));
        assertThat(proxy.connections()).singleElement().satisfies(c -> assertThat(c.isHung()).isTrue());

        assertThatThrownBy(() -> client.command("INCR", "counter")).isInstanceOf(SocketTimeoutException.class);
        await().atMost(ANSWERED).until(() -> proxy.commandCount("INCR") == 1);
        assertThat(redis.server().get("counter")).as("commands after the hang are not forwarded").isNull();

        proxy.heal();

        assertThatThrownBy(client::readReply).as("heal closes hung connections").isInstanceOf(EOFException.class);
        assertThat(proxy.connections()).isEmpty();
        assertThat(connect(ANSWERED).command("INCR", "counter")).isEqualTo(1L);
    }

    @Test
    void closeAfterForwardingCutsTheConnectionYetRedisRunsTheCommand() throws IOException {
        proxy.onNext(named("INCR")).closeAfterForwarding();
        RespConnection client = connect(ANSWERED);

        assertThatThrownBy(() -> client.command("INCR", "counter")).isInstanceOf(IOException.class);

        await().atMost(ANSWERED).untilAsserted(() -> assertThat(redis.server().get("counter")).isEqualTo("1"));
        await().atMost(ANSWERED).until(() -> proxy.connections().isEmpty());
    }

    @Test
    void delayReplyHoldsBackTheMatchingReplyAndEveryReplyBehindIt() throws IOException {
        redis.server().set("k", "v");
        proxy.onNext(named("GET")).delayReply(Duration.ofMillis(300));
        RespConnection client = connect(ANSWERED);

        long start = System.nanoTime();
        client.send("GET", "k");
        client.send("PING");
        assertThat(client.readReply()).isEqualTo("v");
        long getMillis = millisSince(start);
        assertThat(client.readReply()).isEqualTo("PONG");
        long pingMillis = millisSince(start);

        assertThat(getMillis).isGreaterThanOrEqualTo(300);
        assertThat(pingMillis).as("replies keep their order").isGreaterThanOrEqualTo(300);
        assertThat(client.command("GET", "k")).as("one shot only").isEqualTo("v");
    }

    @Test
    void delayCommandHoldsTheMatchingCommandAndEveryLaterOneOfItsConnectionSoAnotherConnectionGetsThereFirst()
            throws IOException {
        // Long, so that the other connection's two round trips surely fit into it on a
        // busy machine.
        FaultRule rule = proxy.onNext(named("SET").withArgument(1, "k")).delayCommand(Duration.ofSeconds(1));
        RespConnection late = connect(ANSWERED);
        RespConnection other = connect(ANSWERED);
        other.command("PING");

        long start = System.nanoTime();
        late.send("SET", "k", "late");
        late.send("INCR", "counter");
        await().atMost(ANSWERED).until(() -> proxy.commandCount("INCR") == 1);

        assertThat(other.command("SET", "k", "first", "NX")).as("Redis has not seen the held SET").isEqualTo("OK");
        assertThat(other.command("GET", "counter")).as("the INCR waits behind the held SET").isNull();
        assertThat(late.readReply()).isEqualTo("OK");
        assertThat(millisSince(start)).isGreaterThanOrEqualTo(1_000);
        assertThat(late.readReply()).isEqualTo(1L);
        assertThat(redis.server().get("k")).as("the held SET ran last").isEqualTo("late");
        assertThat(rule.triggerCount()).isEqualTo(1);
        assertThat(late.command("SET", "k", "again")).as("one shot only").isEqualTo("OK");
        assertThat(redis.server().get("k")).isEqualTo("again");
    }

    @Test
    void delayCommandDropsTheHeldCommandsWhenTheClientClosesItsConnection() throws IOException {
        // Long, so that the proxy surely sees the close while the SET is still held, on a
        // busy machine too.
        proxy.onNext(named("SET")).delayCommand(Duration.ofSeconds(1));
        RespConnection client = connect(ANSWERED);

        client.send("SET", "k", "v");
        client.send("INCR", "counter");
        await().atMost(ANSWERED).until(() -> proxy.commandCount("INCR") == 1);
        client.close();
        await().atMost(ANSWERED).until(() -> proxy.connections().isEmpty());

        // Well past the delay: a held command that was still forwarded would have run by
        // now.
        await().pollDelay(Duration.ofMillis(1_500)).until(() -> true);
        assertThat(redis.server().get("k")).isNull();
        assertThat(redis.server().get("counter")).isNull();
    }

    @Test
    void delayAllRepliesSlowsEveryConnectionUntilHealed() throws IOException {
        RespConnection first = connect(ANSWERED);
        proxy.delayAllReplies(Duration.ofMillis(200));
        RespConnection second = connect(ANSWERED);

        for (RespConnection client : List.of(first, second)) {
            long start = System.nanoTime();
            assertThat(client.command("PING")).isEqualTo("PONG");
            assertThat(millisSince(start)).isGreaterThanOrEqualTo(200);
        }

        proxy.heal();
        assertThat(first.command("PING")).isEqualTo("PONG");
    }

    @Test
    void timesAppliesTheFaultToExactlyThatManyMatchingCommands() throws IOException {
        FaultRule rule = proxy.onNext(named("INCR")).times(2).dropReplyAndClose();

        assertThatThrownBy(() -> connect(ANSWERED).command("INCR", "counter")).isInstanceOf(EOFException.class);
        assertThatThrownBy(() -> connect(ANSWERED).command("INCR", "counter")).isInstanceOf(EOFException.class);
        assertThat(connect(ANSWERED).command("INCR", "counter")).isEqualTo(3L);

        assertThat(rule.triggerCount()).isEqualTo(2);
        assertThat(proxy.commandCount("INCR")).isEqualTo(3);
        assertThat(proxy.acceptedConnections()).isEqualTo(3);
    }

    @Test
    void argumentMatcherLeavesOtherKeysAndOtherCommandsAlone() throws IOException {
        FaultRule rule = proxy.onNext(named("SET").withArgument(1, "lock:{a}")).dropReplyAndClose();
        RespConnection client = connect(ANSWERED);

        assertThat(client.command("SET", "lock:{b}", "x")).isEqualTo("OK");
        assertThat(client.command("GET", "lock:{a}")).isNull();
        assertThat(rule.triggerCount()).isZero();
        assertThatThrownBy(() -> client.command("SET", "lock:{a}", "x")).isInstanceOf(EOFException.class);
        assertThat(rule.triggerCount()).isEqualTo(1);
    }

    @Test
    void ruleLimitedToOneConnectionLeavesTheOthersAlone() throws IOException {
        RespConnection first = connect(ANSWERED);
        first.command("PING");
        RespConnection second = connect(ANSWERED);
        second.command("PING");
        ProxiedConnection secondOnProxy = proxy.connections().get(1);
        assertThat(secondOnProxy.clientAddress().getPort())
            .isNotEqualTo(proxy.connections().get(0).clientAddress().getPort());

        proxy.onNext(RedisCommandMatcher.anyCommand()).onConnection(secondOnProxy).dropReplyAndClose();

        assertThat(first.command("INCR", "counter")).isEqualTo(1L);
        assertThatThrownBy(() -> second.command("INCR", "counter")).isInstanceOf(EOFException.class);
        assertThat(redis.server().get("counter")).isEqualTo("2");
    }

    @Test
    void blackholeAcceptsAndReadsButNeverAnswersOnOpenAndNewConnectionsUntilHealed() throws IOException {
        RespConnection open = connect(UNANSWERED);
        assertThat(open.command("PING")).isEqualTo("PONG");

        proxy.blackhole();

        assertThatThrownBy(() -> open.command("SET", "k", "v")).isInstanceOf(SocketTimeoutException.class);
        RespConnection opened = connect(UNANSWERED);
        assertThatThrownBy(() -> opened.command("PING")).isInstanceOf(SocketTimeoutException.class);
        assertThat(proxy.acceptedConnections()).isEqualTo(2);
        await().atMost(ANSWERED).until(() -> proxy.commandCount("PING") == 2 && proxy.commandCount("SET") == 1);
        assertThat(proxy.connections()).hasSize(2).allSatisfy(c -> assertThat(c.isHung()).isTrue());
        assertThat(redis.server().get("k")).as("nothing reaches Redis").isNull();

        proxy.heal();

        assertThatThrownBy(open::readReply).isInstanceOf(EOFException.class);
        assertThatThrownBy(opened::readReply).isInstanceOf(EOFException.class);
        assertThat(connect(ANSWERED).command("PING")).isEqualTo("PONG");
    }

    @Test
    void resetConnectionsClosesEveryOpenConnectionWithARstAndAcceptsNewOnes() throws IOException {
        RespConnection first = connect(ANSWERED);
        RespConnection second = connect(ANSWERED);
        first.command("PING");
        second.command("PING");

        proxy.resetConnections();

        assertThat(proxy.connections()).isEmpty();
        // A RST surfaces as "Connection reset" (or "Broken pipe" on write), a FIN as end
        // of stream.
        assertThatThrownBy(() -> first.command("PING")).isInstanceOf(SocketException.class);
        assertThatThrownBy(() -> second.command("PING")).isInstanceOf(SocketException.class);
        assertThat(connect(ANSWERED).command("PING")).isEqualTo("PONG");
        assertThat(proxy.acceptedConnections()).isEqualTo(3);
    }

    @Test
    void refuseConnectionsResetsOpenOnesAndRefusesNewOnesUntilHealedOnTheSamePort() throws IOException {
        RespConnection open = connect(ANSWERED);
        open.command("PING");
        int port = proxy.port();

        proxy.refuseConnections();

        assertThatThrownBy(() -> open.command("PING")).isInstanceOf(SocketException.class);
        assertThatThrownBy(() -> connect(ANSWERED)).isInstanceOf(ConnectException.class);

        proxy.heal();

        assertThat(proxy.port()).isEqualTo(port);
        assertThat(connect(ANSWERED).command("PING")).isEqualTo("PONG");
    }

    @Test
    void inlineCommandsAreCountedAndMatchedLikeArrayCommands() throws IOException {
        proxy.onNext(named("GET").withArgument(1, "inline")).dropReplyAndClose();
        try (Socket socket = new Socket(proxy.host(), proxy.port())) {
            socket.setSoTimeout((int) ANSWERED.toMillis());
            socket.getOutputStream()
                .write("SET inline yes\r\nPING\r\nGET inline\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();

            assertThat(new String(in.readNBytes(12), StandardCharsets.US_ASCII)).isEqualTo("+OK\r\n+PONG\r\n");
            assertThat(in.read()).as("the GET reply is dropped and the connection closed").isEqualTo(-1);
        }
        assertThat(redis.server().get("inline")).isEqualTo("yes");
        assertThat(proxy.commandCount("SET")).isEqualTo(1);
        assertThat(proxy.commandCount("PING")).isEqualTo(1);
    }

    @Test
    void resp3RepliesOfEveryKindArePairedWithTheirCommandsAndPushesTakeNoCommandsPlace() throws IOException {
        redis.server().command("SADD", "set", "a");
        FaultRule rule = proxy.onNext(named("ECHO")).dropReplyAndClose();
        RespConnection client = connect(ANSWERED);

        Object hello = client.command("HELLO", "3");
        assertThat(hello).isInstanceOf(Map.class);
        assertThat(((Map<?, ?>) hello).get("proto")).isEqualTo(3L);
        // Pipelined, so the proxy must find every boundary itself. SUBSCRIBE's
        // confirmation is a push in RESP3.
        client.send("SUBSCRIBE", "channel");
        client.send("GET", "missing"); // _ null
        client.send("SMEMBERS", "set"); // ~ set
        client.send("EVAL", "return {double=2.5}", "0"); // , double
        client.send("EVAL", "redis.setresp(3) return true", "0"); // # boolean
        client.send("INFO", "server"); // = verbatim string
        client.send("ECHO", "dropped");

        assertThat(client.readReply()).isEqualTo(List.of("subscribe", "channel", 1L));
        assertThat(client.readReply()).isNull();
        assertThat(client.readReply()).isEqualTo(Set.of("a"));
        assertThat(client.readReply()).isEqualTo(2.5);
        assertThat(client.readReply()).isEqualTo(true);
        assertThat((String) client.readReply()).contains("redis_version:");
        assertThatThrownBy(client::readReply).as("the ECHO reply, and only it, is dropped")
            .isInstanceOf(EOFException.class);
        assertThat(rule.triggerCount()).isEqualTo(1);
    }

    @Test
    void resp3SubscribedConnectionStillGetsPerCommandFaultsWhilePushesFlow() throws IOException {
        RespConnection subscriber = connect(ANSWERED);
        subscriber.command("HELLO", "3");
        subscriber.send("SUBSCRIBE", "channel");
        assertThat(subscriber.readReply()).isEqualTo(List.of("subscribe", "channel", 1L));
        proxy.onNext(named("PING")).delayReply(Duration.ofMillis(200));

        long start = System.nanoTime();
        subscriber.send("PING");
        assertThat(subscriber.readReply()).isEqualTo("PONG");
        assertThat(millisSince(start)).isGreaterThanOrEqualTo(200);
        redis.server().command("PUBLISH", "channel", "hello");
        assertThat(subscriber.readReply()).isEqualTo(List.of("message", "channel", "hello"));
    }

    @Test
    void resp2SubscribedConnectionBecomesAPipeThatRulesLeaveAlone() throws IOException {
        FaultRule rule = proxy.onNext(named("PING")).dropReplyAndClose();
        RespConnection subscriber = connect(ANSWERED);
        subscriber.send("SUBSCRIBE", "channel");
        assertThat(subscriber.readReply()).isEqualTo(List.of("subscribe", "channel", 1L));

        await().atMost(ANSWERED).until(() -> redis.server().subscriberCount("channel") == 1);
        redis.server().command("PUBLISH", "channel", "hello");
        assertThat(subscriber.readReply()).isEqualTo(List.of("message", "channel", "hello"));
        // In RESP2 pub/sub mode PING answers ["pong", ""], indistinguishable in kind from
        // a message.
        assertThat(subscriber.command("PING")).isEqualTo(List.of("pong", ""));
        assertThat(rule.triggerCount()).as("kept for a connection where replies can be paired").isZero();

        assertThatThrownBy(() -> connect(ANSWERED).command("PING")).isInstanceOf(EOFException.class);
        assertThat(rule.triggerCount()).isEqualTo(1);
    }

    private RespConnection connect(Duration readTimeout) throws IOException {
        RespConnection client = RespConnection.open(proxy.host(), proxy.port(), readTimeout);
        clients.add(client);
        return client;
    }

    private static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

}
