package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.channel.socket.SocketChannel;

/**
 * A TCP proxy in front of one Redis server that keeps its clients' connections open while
 * its own connection to Redis drops and comes back, as twemproxy, Envoy's Redis proxy and
 * other L7 proxies do when a node restarts; it can also be pointed at another server
 * while clients stay connected (a DNS or VIP failover, a replaced pod). The client never
 * sees a disconnect, so only what Redis answers (an empty keyspace, a new {@code run_id})
 * shows that the server behind it changed.
 *
 * <pre>{@code
 * try (RedisKeepAliveProxy proxy = RedisKeepAliveProxy.start(redis)) {
 *     RedisClient client = RedisClient.create(proxy.redisUri());
 *     ...                                  // the lock library takes a lock through the proxy
 *     proxy.restartUpstream();             // redis restarts empty; the client's connection stays open
 *     proxy.switchUpstream(standby);       // the same connection now talks to another server
 *     assertThat(proxy.acceptedConnections()).isEqualTo(1);
 * }
 * }</pre>
 *
 * <p>
 * What a client sees, connection by connection:
 * <ul>
 * <li>A command whose reply had not come when the connection to Redis dropped gets an
 * error reply,
 * {@code ERR RedisKeepAliveProxy lost its upstream connection before the reply; the command may have run}.
 * It is not retried on the new server: it may have run on the old one, and a proxy cannot
 * know.</li>
 * <li>Commands sent while the proxy reconnects wait for the new connection, then go in
 * order. While Redis refuses connections they get
 * {@code ERR RedisKeepAliveProxy cannot reach its upstream ...} at once; the proxy
 * retries every 20 ms.</li>
 * <li>The session the client set up when it connected ({@code AUTH}, {@code HELLO 3} with
 * its {@code AUTH} and {@code SETNAME}, {@code SELECT}, {@code CLIENT SETNAME} /
 * {@code SETINFO}) is sent again to every new connection to Redis, first, so a RESP3
 * client keeps getting RESP3 from the new server; those replies stay in the proxy. When
 * the new server refuses one, the client connection is closed.</li>
 * <li>A connection that subscribed to a channel is closed when its connection to Redis
 * drops: subscriptions do not move, and the client resubscribes when it reconnects.</li>
 * </ul>
 *
 * <p>
 * Everything runs on one Netty event loop thread owned by the proxy; {@link #close()}
 * stops it. All methods are thread-safe. {@link RedisFaultProxy} is the other proxy: it
 * injects faults per command and closes the client connection whenever Redis's goes.
 * Chained in front, {@code RedisFaultProxy.start(proxy.host(), proxy.port())}, it adds
 * its reply faults (delays around a node timeout, say) to a connection that survives
 * restarts.
 */
public final class RedisKeepAliveProxy implements AutoCloseable {

    private static final Duration RECONNECT_TIMEOUT = Duration.ofSeconds(10);

    private final ProxyListener listener;

    private final List<KeepAliveConnection> liveConnections = new CopyOnWriteArrayList<>();

    private final AtomicInteger acceptedConnections = new AtomicInteger();

    private final AtomicInteger upstreamConnects = new AtomicInteger();

    private volatile RedisTestServer upstream;

    private RedisKeepAliveProxy(RedisTestServer upstream) {
        this.upstream = Objects.requireNonNull(upstream, "upstream");
        this.listener = new ProxyListener("redis-keep-alive-proxy", this::accept);
    }

    /**
     * Starts a proxy on a free port of {@value RedisTestServer#HOST}, in front of a test
     * server.
     * @param upstream the server to forward to
     * @return the running proxy; close it when done
     */
    public static RedisKeepAliveProxy start(RedisTestServer upstream) {
        return new RedisKeepAliveProxy(upstream);
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
     * The port clients connect to.
     * @return the port
     */
    public int port() {
        return listener.port();
    }

    /**
     * The URI clients connect to, e.g. for {@code RedisClient.create(...)} or a Redlock
     * node address.
     * @return {@code redis://127.0.0.1:PORT}
     */
    public String redisUri() {
        return "redis://" + host() + ":" + port();
    }

    /**
     * The server the proxy forwards to now.
     * @return the one given to {@link #start(RedisTestServer)} or, after a switch, to
     * {@link #switchUpstream}
     */
    public RedisTestServer upstream() {
        return upstream;
    }

    // ------------------------------------------------------------------------------------------------
    // faults

    /**
     * Restarts the server behind the proxy ({@link RedisTestServer#restart()}: same port,
     * empty, new {@code run_id}) and returns once every client connection has a
     * connection to the new process, with its session replayed. The clients stay
     * connected throughout.
     * @throws IllegalStateException when a client connection does not reconnect within 10
     * s
     */
    public void restartUpstream() {
        Map<KeepAliveConnection, Integer> before = generations();
        upstream.restart();
        awaitReconnected(before, "restartUpstream()");
    }

    /**
     * Points the proxy at another server: every client connection's connection to Redis
     * is dropped (commands in flight get an error reply) and opened to {@code next}, with
     * its session replayed; returns once all are. The clients stay connected, and their
     * next commands reach {@code next}.
     * @param next the server to forward to from now on
     * @throws IllegalStateException when a client connection does not reconnect within 10
     * s
     */
    public void switchUpstream(RedisTestServer next) {
        Map<KeepAliveConnection, Integer> before = generations();
        upstream = Objects.requireNonNull(next, "next");
        before.keySet().forEach(KeepAliveConnection::reconnect);
        awaitReconnected(before, "switchUpstream(" + next + ")");
    }

    // ------------------------------------------------------------------------------------------------
    // observations

    /**
     * How many client connections the proxy has accepted since it started. It stays at
     * one per client across restarts and switches: that is the point of this proxy.
     * @return the count, including closed ones
     */
    public int acceptedConnections() {
        return acceptedConnections.get();
    }

    /**
     * How many client connections are open now.
     * @return the count
     */
    public int openConnections() {
        return (int) liveConnections.stream().filter(KeepAliveConnection::isOpen).count();
    }

    /**
     * How many connections to Redis the proxy has opened, over all client connections:
     * one per client connection, plus one per reconnect.
     * @return the count since the proxy started
     */
    public int upstreamConnects() {
        return upstreamConnects.get();
    }

    /**
     * Closes every client connection and its connection to Redis, and stops the event
     * loop. Safe to call twice.
     */
    @Override
    public void close() {
        if (!listener.close()) {
            return;
        }
        liveConnections.forEach(KeepAliveConnection::close);
        listener.shutDownEventLoop();
    }

    /**
     * Names the proxy and its target in failure messages.
     * @return e.g. {@code RedisKeepAliveProxy[127.0.0.1:40001 -> 127.0.0.1:39999]}
     */
    @Override
    public String toString() {
        return "RedisKeepAliveProxy[" + host() + ":" + port() + " -> " + upstream.host() + ":" + upstream.port() + "]";
    }

    // ------------------------------------------------------------------------------------------------
    // connections

    void countUpstreamConnect() {
        upstreamConnects.incrementAndGet();
    }

    void forget(KeepAliveConnection connection) {
        liveConnections.remove(connection);
    }

    private void accept(SocketChannel channel) {
        acceptedConnections.incrementAndGet();
        KeepAliveConnection connection = new KeepAliveConnection(this, channel);
        liveConnections.add(connection);
        connection.start();
    }

    private Map<KeepAliveConnection, Integer> generations() {
        Map<KeepAliveConnection, Integer> generations = new LinkedHashMap<>();
        for (KeepAliveConnection connection : liveConnections) {
            generations.put(connection, connection.upstreamGeneration());
        }
        return generations;
    }

    /**
     * Waits until each connection that was open has a newer connection to Redis than it
     * had, or has closed.
     */
    private void awaitReconnected(Map<KeepAliveConnection, Integer> before, String action) {
        long deadline = System.nanoTime() + RECONNECT_TIMEOUT.toNanos();
        for (Map.Entry<KeepAliveConnection, Integer> entry : before.entrySet()) {
            KeepAliveConnection connection = entry.getKey();
            while (connection.isOpen() && (connection.upstreamGeneration() <= entry.getValue()
                    || connection.state() != KeepAliveConnection.State.READY)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(action + " on " + this + ": a client connection was still "
                            + connection.state() + " after " + RECONNECT_TIMEOUT + "\n" + upstream.logTail(10));
                }
                RedisTestServer.sleepMillis(1);
            }
        }
    }

}
