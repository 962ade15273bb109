package io.github.distlock.redlock;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAccumulator;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.distlock.LockBackendException;
import io.github.distlock.redis.LockConnection;
import io.github.distlock.redis.NodeIncarnation;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.redis.HandOverSubscriber;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;

/**
 * The Lettuce clients of a Redlock: one {@link RedisClient} per independent master, all
 * sharing one set of client resources (event loops, timers), each with a
 * {@link LettuceLockBackend} on a {@link LockConnection} of its own. With restart
 * protection on, each node also has a {@link NodeRestartGuard}: a connection that drops
 * or comes back stops the node's votes until {@code INFO server} says it did not restart
 * recently. A restart the connection did not notice (behind a keep-alive proxy, or an
 * address that now leads to another server) is seen in the vote itself: each node votes
 * with this client's own scripts ({@link NodeIncarnation}), which the restarted node
 * answers with {@code NOSCRIPT}, and a check once a second reads the {@code run_id}
 * besides. The nodes' {@link RedlockReleaseHints release hints} subscribe on the same
 * clients. Closing shuts the clients and the resources down.
 *
 * <pre>{@code
 * LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(
 *         List.of("redis://lock-1:6379", "redis://lock-2:6379", "redis://lock-3:6379"),
 *         Duration.ofMillis(50), "lock:", Duration.ofSeconds(30), true, Set.of());
 * RedlockBackend redlock = nodes.redlock(0.01);   // closing it closes the nodes
 * }</pre>
 */
public final class LettuceRedlockNodes implements AutoCloseable {

    private static final Log logger = LogFactory.getLog(LettuceRedlockNodes.class);

    /**
     * How often every node's run id is read again, besides after every connection change
     * and NOSCRIPT vote.
     */
    private static final Duration CHECK_PERIOD = Duration.ofSeconds(1);

    private final ClientResources resources;

    private final List<RedisClient> clients = new ArrayList<>();

    private final List<RedisURI> uris = new ArrayList<>();

    private final List<LockConnection> connections = new ArrayList<>();

    private final List<LettuceLockBackend> backends = new ArrayList<>();

    private final List<String> names = new ArrayList<>();

    /** One per node, or none when restart protection is off. */
    private final List<NodeRestartGuard> guards = new ArrayList<>();

    /**
     * Each node's vote scripts, loaded by every check; one per node, or none when restart
     * protection is off.
     */
    private final List<NodeIncarnation> incarnations = new ArrayList<>();

    /**
     * Per node, whether a check is queued already: a burst of NOSCRIPT votes asks for one
     * check, not one each.
     */
    private final List<AtomicBoolean> checkPending = new ArrayList<>();

    private final LongAccumulator longestLease = new LongAccumulator(Math::max, 0);

    private final ScheduledExecutorService checks;

    private final String keyPrefix;

    private final Duration nodeTimeout;

    /** The nodes' release hints, made once every node is known. */
    private RedlockReleaseHints hints;

    private LettuceRedlockNodes(String keyPrefix, Duration nodeTimeout, boolean restartProtection) {
        // Lettuce records every command's latency when LatencyUtils is on the classpath;
        // these resources
        // are the Redlock's own, nobody can read what they record, and on the lock path
        // it costs CPU.
        this.resources = DefaultClientResources.builder()
            .commandLatencyRecorder(CommandLatencyRecorder.disabled())
            .build();
        this.keyPrefix = keyPrefix;
        this.nodeTimeout = nodeTimeout;
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "distributed-lock-redlock-restart-check");
            thread.setDaemon(true);
            return thread;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        this.checks = restartProtection ? scheduler : null;
        if (!restartProtection) {
            scheduler.shutdown();
        }
    }

    /**
     * Creates a client per node and starts connecting each in the background.
     * @param uris the nodes' Redis URIs
     * ({@code redis://[user:password@]host[:port][/db]}, or {@code rediss://} for TLS)
     * @param nodeTimeout the bound of every command to a node
     * @param keyPrefix prefix of every lock's key
     * @param defaultTtl the default lease: the longest lease is never taken to be shorter
     * @param restartProtection whether a recently restarted node's votes are held back
     * @param durableNodes the {@code host:port} of nodes that keep every write across a
     * restart
     */
    public static LettuceRedlockNodes connect(List<String> uris, Duration nodeTimeout, String keyPrefix,
            Duration defaultTtl, boolean restartProtection, Set<String> durableNodes) {
        return connect(uris, nodeTimeout, keyPrefix, defaultTtl, restartProtection, durableNodes, CHECK_PERIOD);
    }

    /**
     * {@link #connect(List, Duration, String, Duration, boolean, Set)} with another
     * period of the checks that do not follow an event: for tests that must tell what the
     * events alone catch.
     */
    static LettuceRedlockNodes connect(List<String> uris, Duration nodeTimeout, String keyPrefix, Duration defaultTtl,
            boolean restartProtection, Set<String> durableNodes, Duration checkPeriod) {
        LettuceRedlockNodes nodes = new LettuceRedlockNodes(keyPrefix, nodeTimeout, restartProtection);
        nodes.longestLease.accumulate(defaultTtl.toMillis());
        String channel = HandOverSubscriber.handOverChannel(keyPrefix);
        for (String uri : uris) {
            RedisURI redisUri = RedisURI.create(uri.trim());
            RedisClient client = RedisClient.create(nodes.resources, redisUri);
            String name = redisUri.getHost() + ":" + redisUri.getPort();
            LockConnection connection = new LockConnection(() -> client, nodeTimeout,
                    "distributed-lock.redlock.node-timeout", "the user and password in the URI of " + name
                            + " in distributed-lock.redlock.nodes (redis://user:password@host:port)");
            NodeIncarnation incarnation = null;
            if (restartProtection) {
                NodeRestartGuard guard = new NodeRestartGuard(name, durableNodes.contains(name),
                        nodes.longestLease::get);
                nodes.guards.add(guard);
                int index = nodes.guards.size() - 1;
                nodes.checkPending.add(new AtomicBoolean());
                // A vote answered NOSCRIPT: the node restarted or is another server. Its
                // votes stop
                // counting before this one is counted, until the check has read its
                // run_id.
                incarnation = new NodeIncarnation(() -> {
                    guard.connectionChanged();
                    nodes.checkSoon(index);
                }, guard::serverTime);
                nodes.incarnations.add(incarnation);
                // Only the lock connection's own events count. The release-hint
                // subscription is
                // another connection of the same client: its opening (at a JVM's first
                // wait) would
                // otherwise hold back every node's votes until the next check, failing
                // the very
                // waiters that opened it.
                client.addListener(new RedisConnectionStateListener() {
                    @Override
                    public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                        if (!(handler instanceof StatefulRedisPubSubConnection)) {
                            guard.connectionChanged();
                            nodes.checkSoon(index);
                        }
                    }

                    @Override
                    public void onRedisDisconnected(RedisChannelHandler<?, ?> handler) {
                        if (!(handler instanceof StatefulRedisPubSubConnection)) {
                            guard.connectionChanged();
                        }
                    }
                });
            }
            nodes.clients.add(client);
            nodes.uris.add(redisUri);
            nodes.connections.add(connection);
            nodes.names.add(name);
            nodes.backends.add(incarnation != null ? new LettuceLockBackend(connection, keyPrefix, channel, incarnation)
                    : new LettuceLockBackend(connection, keyPrefix, channel));
        }
        nodes.hints = new RedlockReleaseHints(nodes.clients, nodes.uris, nodes.connections, nodes.names,
                RedlockReleaseHints.channel(keyPrefix));
        if (restartProtection) {
            nodes.checks.scheduleWithFixedDelay(nodes::checkAll, checkPeriod.toMillis(), checkPeriod.toMillis(),
                    TimeUnit.MILLISECONDS);
        }
        return nodes;
    }

    /** The Redlock over these nodes; closing it closes these nodes too. */
    public RedlockBackend redlock(double driftFactor) {
        return new RedlockBackend(backends, names, keyPrefix, nodeTimeout, driftFactor,
                guards.isEmpty() ? null : guards, longestLease, this, hints);
    }

    /**
     * Waits until every node is connected (and, with restart protection, checked), or
     * {@code timeout} has passed.
     * @return how many nodes are connected
     */
    public int awaitConnected(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int connected = 0;
        for (int i = 0; i < backends.size(); i++) {
            if (backends.get(i).awaitConnected(deadline)) {
                connected++;
                if (!guards.isEmpty()) {
                    check(i);
                }
            }
        }
        return connected;
    }

    private void checkSoon(int index) {
        if (!checkPending.get(index).compareAndSet(false, true)) {
            return;
        }
        try {
            checks.execute(() -> check(index));
        }
        catch (RejectedExecutionException ex) {
            // Closing.
        }
    }

    /** The restart guards, one per node in order; empty without restart protection. */
    List<NodeRestartGuard> guards() {
        return List.copyOf(guards);
    }

    private void checkAll() {
        for (int i = 0; i < guards.size(); i++) {
            check(i);
        }
    }

    /**
     * Reads the node's run id and uptime and tells its guard; a node that does not answer
     * stays as it is. The node's vote scripts are loaded between two reads of its run id:
     * only if both name the server the scripts were bound to does the node count, so that
     * the scripts of one nonce are only ever known to one server.
     */
    private void check(int index) {
        checkPending.get(index).set(false);
        NodeRestartGuard guard = guards.get(index);
        NodeIncarnation incarnation = incarnations.get(index);
        LockConnection connection = connections.get(index);
        long epoch = guard.epoch();
        try {
            String before = field(connection.info("server"), "run_id");
            incarnation.load(connection);
            long sent = System.nanoTime();
            String info = connection.info("server");
            long received = System.nanoTime();
            String runId = field(info, "run_id");
            String uptime = field(info, "uptime_in_seconds");
            String serverTime = field(info, "server_time_usec");
            if (runId == null || uptime == null) {
                return;
            }
            boolean bound = runId.equals(before) ? incarnation.bind(runId) : rotated(incarnation);
            if (!bound) {
                // The scripts went to another server than the one they were bound to, or
                // to one of two: new
                // ones, loaded by the next check, and no vote counts meanwhile. Before
                // verified(), so that the
                // run id it reads is recorded (and a change held back) without making the
                // node count.
                guard.connectionChanged();
            }
            if (serverTime != null) {
                // Before verified(): a jump seen here holds the node back before it
                // counts again.
                guard.serverTime(runId, sent, received, Long.parseLong(serverTime));
            }
            guard.verified(epoch, runId, Long.parseLong(uptime));
            if (!bound) {
                checkSoon(index);
            }
        }
        catch (LockBackendException | NumberFormatException ex) {
            logger.debug("Could not check Redlock node " + guard.node() + " for a restart", ex);
        }
    }

    private static boolean rotated(NodeIncarnation incarnation) {
        incarnation.rotate();
        return false;
    }

    private static String field(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return line.substring(name.length() + 1).trim();
            }
        }
        return null;
    }

    /**
     * The nodes' backends, in configuration order: for tests that put something between
     * them and the Redlock.
     */
    List<LettuceLockBackend> backends() {
        return List.copyOf(backends);
    }

    /** The nodes' {@code host:port}, in order. */
    public List<String> names() {
        return names;
    }

    @Override
    public void close() {
        if (checks != null) {
            checks.shutdownNow();
        }
        hints.close();
        for (LettuceLockBackend backend : backends) {
            backend.close();
        }
        for (RedisClient client : clients) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        resources.shutdown();
    }

}
