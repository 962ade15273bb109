package io.github.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.distlock.core.HandOverNotifications;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode.NodeFlag;
import io.lettuce.core.codec.StringCodec;

/**
 * How releases publish hand-overs and how waiters of this JVM hear them, decided once per
 * JVM:
 * <ul>
 * <li><b>Sharded pub/sub</b> in a Redis Cluster whose nodes all have it (Redis 7.0 and
 * later, every Valkey): release.lua {@code SPUBLISH}es on the lock's slot channel
 * ({@link ShardedHandOverChannels}), which only the shard owning the lock forwards, and
 * this JVM {@code SSUBSCRIBE}s to the channel of each slot it waits on
 * ({@link ShardedHandOverSubscriber}).</li>
 * <li><b>The global channel</b> ({@code <prefix>released}, {@link HandOverSubscriber})
 * everywhere else: standalone, Sentinel, a Cluster with a node older than Redis 7.0, or
 * when {@code distributed-lock.cluster-notifications=global}. In a Cluster every node
 * forwards every {@code PUBLISH} to every other node.</li>
 * </ul>
 * Each node is asked whether it knows {@code SPUBLISH} ({@code COMMAND INFO}), not what
 * version it claims: Valkey reports {@code redis_version:7.2.4} for compatibility and its
 * own version in {@code valkey_version}. Only where an ACL refuses {@code COMMAND INFO}
 * does the version decide, read from the right field. The choice is logged once at INFO,
 * naming each server as it is ("Valkey 9.1.2"). Until the nodes are known (a few
 * milliseconds after startup; retried while Redis does not answer), releases publish on
 * the global channel and waiters poll.
 *
 * <pre>{@code
 * RedisHandOverNotifications notifications = new RedisHandOverNotifications(lettuceConnectionFactory, "lock:", true,
 *         releaseSubscriber, lockWaiters, Duration.ofSeconds(2));
 * LettuceLockBackend backend = new LettuceLockBackend(lettuceConnectionFactory, Duration.ofSeconds(2), "lock:",
 *         notifications);   // releases publish where the notifications say
 * }</pre>
 *
 * <p>
 * Waiters and releasers in different JVMs must agree for wake-ups to be prompt; where
 * they do not (a rolling upgrade from a version without sharded pub/sub, or a Jedis
 * service sharing the locks), hand-overs are still made in Redis and found by the
 * waiter's fallback poll, at most a second later. A message is only ever a hint.
 */
public sealed class RedisHandOverNotifications implements Function<LockKey, HandOverChannel>, HandOverNotifications,
        SmartLifecycle, AutoCloseable permits ReleaseNotifications {

    /**
     * Under its name from before the rename, so that {@code logging.level} settings for
     * it keep working.
     */
    private static final Log logger = LogFactory.getLog("io.github.distlock.redis.ReleaseNotifications");

    /** How long a failed look at the Cluster's nodes is not retried. */
    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** How releases publish and waiters listen. */
    public enum Mode {

        /** {@code PUBLISH}/{@code SUBSCRIBE} on the one global channel. */
        GLOBAL,
        /** {@code SPUBLISH}/{@code SSUBSCRIBE} on one channel per Cluster hash slot. */
        SHARDED

    }

    private final LettuceConnectionFactory connectionFactory;

    private final HandOverSubscriber global;

    private final String globalChannel;

    private final HandOverChannel everyKeyGlobal;

    private final ShardedHandOverChannels channels;

    private final ShardedHandOverSubscriber sharded;

    private final Duration timeout;

    private final AtomicReferenceArray<HandOverChannel> shardedBySlot = new AtomicReferenceArray<>(
            ShardedHandOverChannels.SLOTS);

    private final AtomicBoolean detecting = new AtomicBoolean();

    private volatile Mode mode;

    private volatile long failedAt;

    private volatile boolean warned;

    private volatile boolean running = true;

    /**
     * @param connectionFactory Spring Boot's Lettuce connection factory
     * @param keyPrefix the lock key prefix, for example {@code lock:}
     * @param shardedAllowed {@code false} to use the global channel even where sharded
     * pub/sub works
     * @param global the global channel's subscriber
     * @param waiters the local waiters; from now on they ask this object whether
     * hand-overs arrive
     * @param timeout bound of each command that asks the nodes what they support
     */
    public RedisHandOverNotifications(RedisConnectionFactory connectionFactory, String keyPrefix,
            boolean shardedAllowed, HandOverSubscriber global, LockWaiters waiters, Duration timeout) {
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalStateException("RedisHandOverNotifications runs on Lettuce only, but the "
                    + "RedisConnectionFactory is a " + connectionFactory.getClass().getName());
        }
        this.connectionFactory = lettuce;
        this.global = global;
        this.globalChannel = HandOverSubscriber.handOverChannel(keyPrefix);
        this.everyKeyGlobal = HandOverChannel.global(globalChannel);
        this.channels = new ShardedHandOverChannels(keyPrefix);
        this.sharded = new ShardedHandOverSubscriber(this::clusterClient, channels, waiters);
        this.timeout = timeout;
        // Replaces the global subscriber's own registration (it registered when it was
        // built, before us).
        waiters.notificationsFrom(this);
        if (!shardedAllowed) {
            decide(Mode.GLOBAL, "distributed-lock.cluster-notifications=global");
        }
        else if (!lettuce.isClusterAware()) {
            decide(Mode.GLOBAL, "not a Redis Cluster");
        }
        else {
            detectInBackground();
        }
    }

    /**
     * How notifications travel, or {@code null} while a Cluster's nodes are not known
     * yet.
     */
    public Mode mode() {
        return mode;
    }

    /** The channel release.lua publishes a hand-over of {@code key} on. */
    @Override
    public HandOverChannel apply(LockKey key) {
        Mode current = mode;
        if (current != Mode.SHARDED) {
            if (current == null) {
                detectInBackground();
            }
            return everyKeyGlobal;
        }
        int slot = ShardedHandOverChannels.slotOf(key);
        HandOverChannel channel = shardedBySlot.get(slot);
        if (channel == null) {
            channel = HandOverChannel.sharded(globalChannel, channels.channelOf(slot));
            shardedBySlot.set(slot, channel);
        }
        return channel;
    }

    /**
     * Starts listening for hand-overs of {@code key} if needed, and says whether they
     * arrive now.
     */
    boolean startListening(LockKey key) {
        Mode current = mode;
        if (current == Mode.SHARDED) {
            return sharded.startListening(key);
        }
        if (current == Mode.GLOBAL) {
            return global.startListening();
        }
        detectInBackground();
        return false;
    }

    @Override
    public boolean startDelivery(LockKey key) {
        return startListening(key);
    }

    @Override
    public boolean isDelivering(LockKey key) {
        return isListening(key);
    }

    /** Whether hand-overs of {@code key} arrive now, without starting anything. */
    boolean isListening(LockKey key) {
        Mode current = mode;
        if (current == Mode.SHARDED) {
            return sharded.isListening(key);
        }
        return current == Mode.GLOBAL && global.isListening();
    }

    /** How many hash slots this JVM has a confirmed sharded subscription for. */
    public int subscribedSlots() {
        return sharded.confirmedSlots();
    }

    private RedisClusterClient clusterClient() {
        return (RedisClusterClient) connectionFactory.getRequiredNativeClient();
    }

    /**
     * Asks every node what it is and has on a thread of its own, unless one looks or
     * looked within a second.
     */
    private void detectInBackground() {
        if (mode != null || !running || System.nanoTime() - failedAt < RETRY_NANOS
                || !detecting.compareAndSet(false, true)) {
            return;
        }
        Thread detector = new Thread(() -> {
            try {
                detect();
            }
            catch (RuntimeException ex) {
                failedAt = System.nanoTime();
                if (!warned) {
                    warned = true;
                    logger.warn("Could not ask the Redis Cluster's nodes whether they have sharded pub/sub, to "
                            + "choose how lock releases are announced (" + ex.getMessage() + "). Until it answers, "
                            + "releases publish on channel '" + globalChannel + "' and waiters poll.");
                }
            }
            finally {
                detecting.set(false);
            }
        }, "distributed-lock-detect");
        detector.setDaemon(true);
        detector.start();
    }

    private void detect() {
        Map<String, ServerVersion> versions = new TreeMap<>();
        Map<String, ServerVersion> without = new TreeMap<>();
        long millis = timeout.toMillis();
        try (StatefulRedisClusterConnection<String, String> connection = clusterClient().connect(StringCodec.UTF8)) {
            for (RedisClusterNode node : connection.getPartitions()) {
                if (node.is(NodeFlag.FAIL) || node.is(NodeFlag.NOADDR) || node.is(NodeFlag.HANDSHAKE)) {
                    continue;
                }
                RedisAsyncCommands<String, String> commands = connection.getConnectionAsync(node.getNodeId())
                    .get(millis, TimeUnit.MILLISECONDS)
                    .async();
                ServerVersion version = ServerVersion.of(commands.info("server").get(millis, TimeUnit.MILLISECONDS));
                String address = node.getUri().getHost() + ":" + node.getUri().getPort();
                versions.put(address, version);
                if (!hasShardedPubSub(commands, version)) {
                    without.put(address, version);
                }
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
        catch (ExecutionException | TimeoutException ex) {
            throw new IllegalStateException(ex.getCause() == null ? ex.toString() : ex.getCause().getMessage(), ex);
        }
        if (versions.isEmpty()) {
            throw new IllegalStateException("no node answered");
        }
        if (without.isEmpty()) {
            decide(Mode.SHARDED, describe(versions.values()));
        }
        else {
            List<String> nodes = new ArrayList<>();
            without.forEach((address, version) -> nodes.add(address + " runs " + version));
            decide(Mode.GLOBAL, "Redis Cluster with nodes older than 7.0, which have no sharded pub/sub: "
                    + String.join(", ", nodes));
        }
    }

    /**
     * Asks the node whether it has {@code SPUBLISH}, rather than trusting a version
     * number: Valkey reports {@code redis_version:7.2.4} whatever its own version. Where
     * an ACL refuses {@code COMMAND INFO}, the version decides, read from the field the
     * server really keeps.
     */
    private boolean hasShardedPubSub(RedisAsyncCommands<String, String> node, ServerVersion version)
            throws InterruptedException, ExecutionException, TimeoutException {
        try {
            List<Object> reply = node.commandInfo("SPUBLISH").get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            // One entry per command asked about: its description, or nil for a command
            // the server does not know.
            return !reply.isEmpty() && reply.get(0) != null;
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof RedisCommandExecutionException) {
                return version.hasShardedPubSub();
            }
            throw ex;
        }
    }

    /**
     * {@code Redis Cluster 7.0.15} as before Valkey was known, else e.g.
     * {@code Cluster of Valkey 9.1.2}.
     */
    private static String describe(Collection<ServerVersion> versions) {
        List<ServerVersion> distinct = versions.stream().distinct().toList();
        if (distinct.stream().allMatch(ServerVersion::isRedis)) {
            return "Redis Cluster " + String.join(", ", distinct.stream().map(ServerVersion::version).toList());
        }
        return "Cluster of " + String.join(", ", distinct.stream().map(ServerVersion::toString).toList());
    }

    private void decide(Mode chosen, String why) {
        mode = chosen;
        if (chosen == Mode.SHARDED) {
            logger.info("Lock release notifications: sharded pub/sub (SSUBSCRIBE per hash slot, channels "
                    + channels.channelOf(0).replaceAll("\\{.*", "{<tag>}") + ") on " + why);
        }
        else {
            logger.info("Lock release notifications: pub/sub on channel '" + globalChannel + "' (" + why + ")");
        }
    }

    /**
     * Nothing to do but allow subscriptions again after a stop: they start on the first
     * wait.
     */
    @Override
    public void start() {
        running = true;
        sharded.reopen();
    }

    /**
     * Unsubscribes while the connection factory still runs (our phase is later than its).
     */
    @Override
    public void stop() {
        close();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** The hand-over subscriber's phase: stopped before the connection factory. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }

    @Override
    public void close() {
        running = false;
        sharded.close();
    }

}
