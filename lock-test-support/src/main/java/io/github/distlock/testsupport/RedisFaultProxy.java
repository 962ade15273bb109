package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.channel.socket.SocketChannel;

/**
 * A TCP proxy in front of one Redis server that understands RESP (2 and 3), so a test can
 * lose, delay or cut the reply to one particular command, or make the whole server look
 * hung, reset or down, without tc or iptables.
 *
 * <pre>{@code
 * try (RedisFaultProxy proxy = RedisFaultProxy.start(redis.server())) {
 *     RedisClient client = RedisClient.create(proxy.redisUri());
 *     proxy.onNext(RedisCommandMatcher.named("SET").withArgument(1, "lock:{a}")).dropReplyAndClose();
 *     ...                                     // the lock library acquires lock:{a}
 *     assertThat(proxy.commandCount("SET")).isEqualTo(2);   // Lettuce re-sent it after reconnecting
 *     proxy.heal();
 * }
 * }</pre>
 *
 * <p>
 * Per-command faults ({@link #onNext(RedisCommandMatcher)}) hit the next matching
 * command(s) on any connection, or on one chosen connection. Global faults
 * ({@link #delayAllReplies(Duration)}, {@link #blackhole()}, {@link #resetConnections()},
 * {@link #refuseConnections()}) last until {@link #heal()}. Each client connection gets
 * its own connection to Redis, opened when the client connects, so Redis sees as many
 * clients as the proxy does.
 *
 * <p>
 * What a lost reply does to the client library is the point of these faults. Observed
 * with Lettuce 6.6 (auto-reconnect on, the default): after
 * {@link FaultRule.Builder#dropReplyAndClose()} on {@code SET k v NX PX 30000}, Lettuce
 * reconnects and sends the unanswered {@code SET} again, so Redis runs it twice; the
 * second run finds the key already set, and the caller gets "not set" (null) although its
 * own value is in Redis. A lock acquire that trusts that reply wrongly reports the lock
 * as taken by someone else. After {@link FaultRule.Builder#dropReplyAndHang()} the
 * command times out; once {@link #heal()} closed the hung connection, Lettuce reconnects
 * and does not re-send commands that already timed out. {@code
 * RedisFaultProxyLettuceTest} shows both.
 *
 * <p>
 * Everything runs on one Netty event loop thread owned by the proxy; {@link #close()}
 * stops it. All methods are thread-safe.
 */
public final class RedisFaultProxy implements AutoCloseable {

    private final String redisHost;

    private final int redisPort;

    private final ProxyListener listener;

    private final int port;

    private final List<FaultRule> rules = new CopyOnWriteArrayList<>();

    private final Map<String, AtomicLong> commandCounts = new ConcurrentHashMap<>();

    private final List<ProxiedConnection> liveConnections = new CopyOnWriteArrayList<>();

    private final AtomicInteger acceptedConnections = new AtomicInteger();

    private volatile Duration replyDelay = Duration.ZERO;

    private volatile boolean blackholed;

    private RedisFaultProxy(String redisHost, int redisPort) {
        this.redisHost = Objects.requireNonNull(redisHost, "redisHost");
        this.redisPort = redisPort;
        this.listener = new ProxyListener("redis-fault-proxy", this::accept);
        this.port = listener.port();
    }

    /**
     * Starts a proxy on a free port of {@value RedisTestServer#HOST}.
     * @param redisHost the Redis server to forward to
     * @param redisPort its port
     * @return the running proxy; close it when done
     */
    public static RedisFaultProxy start(String redisHost, int redisPort) {
        return new RedisFaultProxy(redisHost, redisPort);
    }

    /**
     * Starts a proxy in front of a test server, e.g.
     * {@code RedisFaultProxy.start(redis.server())}.
     * @param server the server to forward to
     * @return the running proxy; close it when done
     */
    public static RedisFaultProxy start(RedisTestServer server) {
        return start(server.host(), server.port());
    }

    // ------------------------------------------------------------------------------------------------
    // address

    /**
     * The host clients connect to.
     * @return {@value RedisTestServer#HOST}
     */
    public String host() {
        return RedisTestServer.HOST;
    }

    /**
     * The port clients connect to; it stays the same across {@link #refuseConnections()}
     * and {@link #heal()}.
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * The URI clients connect to, e.g. for {@code RedisClient.create(...)} or
     * {@code spring.data.redis.url}.
     * @return {@code redis://127.0.0.1:PORT}
     */
    public String redisUri() {
        return "redis://" + host() + ":" + port;
    }

    // ------------------------------------------------------------------------------------------------
    // faults

    /**
     * Starts a rule for the next command matching {@code matcher}; choosing the fault
     * registers it.
     *
     * <pre>{@code
     * proxy.onNext(RedisCommandMatcher.named("EVALSHA")).times(2).delayReply(Duration.ofMillis(300));
     * }</pre>
     * @param matcher which commands
     * @return a builder for the rule
     */
    public FaultRule.Builder onNext(RedisCommandMatcher matcher) {
        return new FaultRule.Builder(this, matcher);
    }

    /**
     * Delays every reply and push message, on every connection, by at least {@code delay}
     * from when Redis sent it, until {@link #heal()}. A rule's longer delay wins for its
     * reply. Order is kept.
     * @param delay how long; zero turns the delay off
     */
    public void delayAllReplies(Duration delay) {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delayAllReplies needs a delay of zero or more, was " + delay);
        }
        this.replyDelay = delay;
    }

    /**
     * Makes Redis look hung: every open connection and every new one until
     * {@link #heal()} reads and counts commands but forwards none and answers nothing, so
     * clients time out. Replies still on their way are dropped.
     */
    public void blackhole() {
        blackholed = true;
        liveConnections.forEach(ProxiedConnection::hang);
    }

    /**
     * Closes every open client connection now, with a TCP RST where the platform allows
     * it, as a crashed server or a middlebox would. New connections are accepted as
     * usual; returns once all are closed.
     */
    public void resetConnections() {
        liveConnections.forEach(ProxiedConnection::reset);
    }

    /**
     * Makes Redis look down: stops listening, so new connections are refused, and resets
     * every open one, until {@link #heal()} listens again on the same port.
     */
    public synchronized void refuseConnections() {
        listener.stopListening();
        resetConnections();
    }

    /**
     * Ends every fault: removes all rules and the global delay, ends the blackhole,
     * listens again after {@link #refuseConnections()}. Hung connections are closed
     * rather than resumed, because their clients are still waiting for replies that were
     * dropped and would pair later replies with the wrong commands. Replies already held
     * back by a delay still leave at their set time.
     * @throws IllegalStateException when the port was taken by another process while
     * connections were refused
     */
    public synchronized void heal() {
        rules.clear();
        replyDelay = Duration.ZERO;
        blackholed = false;
        for (ProxiedConnection connection : liveConnections) {
            if (connection.isHung()) {
                connection.close();
            }
        }
        listener.listenAgain();
    }

    // ------------------------------------------------------------------------------------------------
    // observations

    /**
     * How many commands with this name clients sent through the proxy, on all
     * connections, including those a fault kept from Redis (on hung connections). Shows,
     * for example, that a client re-sent a command after reconnecting.
     * @param commandName e.g. {@code "SET"}, case-insensitive
     * @return the count since the proxy started
     */
    public long commandCount(String commandName) {
        AtomicLong count = commandCounts.get(commandName.toUpperCase(Locale.ROOT));
        return count == null ? 0 : count.get();
    }

    /**
     * How many client connections the proxy has accepted since it started, including
     * closed ones.
     * @return the count
     */
    public int acceptedConnections() {
        return acceptedConnections.get();
    }

    /**
     * The client connections open now, oldest first.
     * @return a snapshot
     */
    public List<ProxiedConnection> connections() {
        // Filtered because Netty completes a close before it runs the handler that
        // unlists the connection.
        return liveConnections.stream().filter(ProxiedConnection::isOpen).toList();
    }

    /**
     * Closes every connection, stops listening and stops the event loop thread. Safe to
     * call twice.
     */
    @Override
    public void close() {
        if (!listener.close()) {
            return;
        }
        liveConnections.forEach(ProxiedConnection::close);
        listener.shutDownEventLoop();
    }

    /**
     * Names the proxy and its target in failure messages.
     * @return e.g. {@code RedisFaultProxy[127.0.0.1:40001 -> 127.0.0.1:39999]}
     */
    @Override
    public String toString() {
        return "RedisFaultProxy[" + host() + ":" + port + " -> " + redisHost + ":" + redisPort + "]";
    }

    // ------------------------------------------------------------------------------------------------
    // connections

    String redisHost() {
        return redisHost;
    }

    int redisPort() {
        return redisPort;
    }

    Duration replyDelay() {
        return replyDelay;
    }

    void addRule(FaultRule rule) {
        rules.add(rule);
    }

    /**
     * The oldest rule with shots left that applies to the command, after taking one of
     * its shots; or null.
     */
    FaultRule claimRule(RedisCommand command, ProxiedConnection from, boolean getsOwnReply) {
        for (FaultRule rule : rules) {
            if (rule.claim(command, from, getsOwnReply)) {
                return rule;
            }
        }
        return null;
    }

    void count(RedisCommand command) {
        commandCounts.computeIfAbsent(command.name(), name -> new AtomicLong()).incrementAndGet();
    }

    void forget(ProxiedConnection connection) {
        liveConnections.remove(connection);
    }

    private void accept(SocketChannel channel) {
        ProxiedConnection connection = new ProxiedConnection(this, acceptedConnections.incrementAndGet(), channel);
        // Listed before the blackhole flag is read, and blackhole() sets the flag before
        // walking the list, so a
        // connection accepted during blackhole() is hung by one or the other (or both:
        // hanging is idempotent).
        liveConnections.add(connection);
        connection.start(blackholed);
    }

}
