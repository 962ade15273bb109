package io.github.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
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
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode.NodeFlag;
import io.lettuce.core.codec.StringCodec;

/**
 * How releases publish hand-overs and how waiters of this JVM hear them, decided once per
 * JVM:
 * <ul>
 * <li><b>Sharded pub/sub</b> in a Redis Cluster whose nodes all run Redis 7 or later:
 * release.lua {@code SPUBLISH}es on the lock's slot channel
 * ({@link ShardedHandOverChannels}), which only the shard owning the lock forwards, and
 * this JVM {@code SSUBSCRIBE}s to the channel of each slot it waits on
 * ({@link ShardedHandOverSubscriber}).</li>
 * <li><b>The global channel</b> ({@code <prefix>released}, {@link HandOverSubscriber})
 * everywhere else: standalone, Sentinel, a Cluster with a node older than 7, or when
 * {@code distributed-lock.cluster-notifications=global}. In a Cluster every node forwards
 * every {@code PUBLISH} to every other node.</li>
 * </ul>
 * The choice is logged once at INFO. Until a Cluster's versions are known (a few
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

    /** The first Redis version with sharded pub/sub. */
    private static final int SHARDED_SINCE_MAJOR = 7;

    /** How long a failed look at the Cluster's versions is not retried. */
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
     * @param timeout bound of each command of the version check
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
     * How notifications travel, or {@code null} while a Cluster's versions are not known
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
     * Looks up every node's version on a thread of its own, unless one looks or looked
     * within a second.
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
                    logger.warn("Could not read the Redis Cluster's versions to choose how lock releases are "
                            + "announced (" + ex.getMessage() + "). Until it answers, releases publish on channel '"
                            + globalChannel + "' and waiters poll.");
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
        Map<String, String> versions = new TreeMap<>();
        try (StatefulRedisClusterConnection<String, String> connection = clusterClient().connect(StringCodec.UTF8)) {
            for (RedisClusterNode node : connection.getPartitions()) {
                if (node.is(NodeFlag.FAIL) || node.is(NodeFlag.NOADDR) || node.is(NodeFlag.HANDSHAKE)) {
                    continue;
                }
                String info = connection.getConnectionAsync(node.getNodeId())
                    .thenCompose(nodeConnection -> nodeConnection.async().info("server"))
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                versions.put(node.getUri().getHost() + ":" + node.getUri().getPort(), versionIn(info));
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
        List<String> older = new ArrayList<>();
        versions.forEach((node, version) -> {
            if (major(version) < SHARDED_SINCE_MAJOR) {
                older.add(node + " runs " + version);
            }
        });
        if (older.isEmpty()) {
            decide(Mode.SHARDED, "Redis Cluster " + String.join(", ", versions.values().stream().distinct().toList()));
        }
        else {
            decide(Mode.GLOBAL, "Redis Cluster with nodes older than 7.0, which have no sharded pub/sub: "
                    + String.join(", ", older));
        }
    }

    private static String versionIn(String info) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                return line.substring("redis_version:".length()).trim();
            }
        }
        return "unknown";
    }

    private static int major(String version) {
        int dot = version.indexOf('.');
        try {
            return Integer.parseInt(dot < 0 ? version : version.substring(0, dot));
        }
        catch (NumberFormatException ex) {
            return 0;
        }
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
