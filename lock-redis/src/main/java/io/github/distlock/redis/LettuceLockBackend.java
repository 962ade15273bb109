package io.github.distlock.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.distlock.core.LockKey;
import io.github.distlock.core.NonBlockingLockBackend;

/**
 * Locks in one Redis deployment (standalone, Sentinel or Cluster) on Lettuce, the native
 * path: a connection of its own, opened from the Lettuce client of Spring Data Redis's
 * {@link LettuceConnectionFactory} (or of a client the caller built, for a Redlock node).
 * {@link SpringDataLockBackend} is the same lock over any other connection factory
 * (Jedis). It was called {@code RedisLockBackend} until that name was deprecated.
 *
 * <p>
 * Wire format: the lock is a plain string {@code <prefix>{<key>}} set with
 * {@code SET NX PX}, so any client following the redis.io single-instance pattern
 * excludes us and is excluded by us. The fencing counter lives at
 * {@code <prefix>{<key>}:fence}; callers that wait queue in {@code <prefix>{<key>}:queue}
 * (a sorted set of tokens by arrival) with their entries in
 * {@code <prefix>{<key>}:waiting}, all in the lock's Cluster slot. A release hands the
 * lock to the longest-waiting live waiter (it sets the key to that waiter's token) and
 * publishes {@code <SHA-1 of the token>:<fencing token>:<proof>} on the hand-over channel
 * (release.lua says why the token itself is never published; in a Redis Cluster 7+ it is
 * {@code SPUBLISH}ed on the lock's slot channel instead, see
 * {@link RedisHandOverNotifications}); with nobody queued it just deletes the key and
 * publishes nothing. The scripts ({@code acquire.lua}, {@code release.lua},
 * {@code renew.lua}, {@code cancel.lua}, {@code fence.lua}, and {@code fencing.lua} with
 * the fencing-token functions that the others share, and the read-only
 * {@code inspect.lua} of the Actuator's view) sit next to this class and run with
 * {@code EVALSHA}, falling back to {@code EVAL} once per node.
 *
 * <p>
 * What each operation sends and what its answer means is written once, for both drivers,
 * in the package's lock protocol; this class is that protocol over a Lettuce connection.
 * The usual acquisition runs no script at all: a first attempt that needs no fencing
 * token is a bare {@code SET NX PX GET} ({@link #tryAcquire(LockKey, String, long)}), and
 * {@code fence.lua} issues the token later if the holder asks for it. {@code GET} makes
 * it idempotent: re-sent after its reply was lost, it answers with our own token, which
 * means "ours". Redis 6.2 refuses {@code NX} with {@code GET}; there the first attempt
 * runs {@code acquire.lua} instead. Drawing a token costs Redis more than the {@code SET}
 * itself (docs/benchmarks-analysis.md), and most holders never read it.
 *
 * <p>
 * Why hand over instead of waking the waiters to race for the key: with 8 contenders on
 * one key, every release woke 7 clients, at most one of which could win, and the
 * releaser, one round trip away from the key, often re-took it before any of them
 * (profile in docs/benchmarks-analysis.md). A hand-over wakes one client, which owns the
 * lock when the message arrives, and the queue makes waits first come, first served.
 *
 * <p>
 * Commands go through one dedicated Lettuce connection ({@link LockConnection}), opened
 * from the Lettuce client that Spring Boot's {@link LettuceConnectionFactory} built (so
 * host, Sentinel or Cluster topology, credentials, TLS and database all come from
 * {@code spring.data.redis.*}). Lettuce connections are thread-safe and pipeline
 * concurrent commands, so one is enough; being our own, lock commands never queue behind
 * the application's slow commands. Each command is bounded by the operation timeout,
 * whatever the client's own (often 60 s) command timeout is: a hung Redis must fail
 * guarded calls fast, not block them. Fetching a Spring Data connection wrapper per
 * command instead cost half the throughput at 8 threads.
 */
public sealed class LettuceLockBackend extends RedisProtocolBackend
        implements RaisableFencingLockBackend, NonBlockingLockBackend, SmartLifecycle permits RedisLockBackend {

    /** Suffix of the fencing counter's key. */
    public static final String FENCE_SUFFIX = RedisLockProtocol.FENCE_SUFFIX;

    /** Suffix of the wait queue: a sorted set of waiters' tokens by arrival. */
    public static final String QUEUE_SUFFIX = RedisLockProtocol.QUEUE_SUFFIX;

    /**
     * Suffix of the waiters' entries: a hash of token to
     * {@code <alive until ms>:<lease ms>}.
     */
    public static final String WAITING_SUFFIX = RedisLockProtocol.WAITING_SUFFIX;

    /**
     * Suffix of a Redlock wake-up line on its arbiter node: a sorted set of waiter ids by
     * arrival (ms).
     */
    public static final String REDLOCK_LINE_SUFFIX = RedisLockProtocol.REDLOCK_LINE_SUFFIX;

    /**
     * Suffix of the alive-until (ms) of each waiter in a Redlock wake-up line: a hash.
     */
    public static final String REDLOCK_ALIVE_SUFFIX = RedisLockProtocol.REDLOCK_ALIVE_SUFFIX;

    private final LockConnection connection;

    /**
     * A backend on Spring Boot's connection factory, with a connection of its own opened
     * from the factory's Lettuce client.
     * @param connectionFactory Spring Data Redis's connection factory; must be Lettuce
     * @param operationTimeout upper bound on each lock command
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param handOverChannel where a release publishes that it handed the lock over to a
     * waiter
     * @throws IllegalStateException if the factory is not a
     * {@link LettuceConnectionFactory}
     */
    public LettuceLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout, String keyPrefix,
            String handOverChannel) {
        this(connectionFactory, operationTimeout, keyPrefix, HandOverChannel.forEveryKey(handOverChannel),
                ReplicaAcks.NONE);
    }

    /**
     * A backend on a connection of its own making: one per master for a backend that
     * spans several independent masters (Redlock), each with its own client.
     *
     * <pre>{@code
     * RedisClient client = RedisClient.create("redis://node-1:6379");
     * LockConnection connection = new LockConnection(() -> client, Duration.ofSeconds(1));
     * LettuceLockBackend node = new LettuceLockBackend(connection, "lock:", "lock:released");
     * }</pre>
     * @param connection the connection to run every lock command on; this backend starts
     * and closes it
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param handOverChannel where a release publishes that it handed the lock over to a
     * waiter
     */
    public LettuceLockBackend(LockConnection connection, String keyPrefix, String handOverChannel) {
        this(connection, keyPrefix, HandOverChannel.forEveryKey(handOverChannel), ReplicaAcks.NONE);
    }

    /**
     * A Redlock node that votes (acquires, renews, draws and raises fencing tokens) with
     * this client's own scripts, by digest only: a node that restarted or changed
     * identity answers {@code NOSCRIPT} instead of voting ({@link NodeIncarnation}). Load
     * them with {@link NodeIncarnation#load} before the votes count.
     * @param incarnation the scripts to vote with
     */
    public LettuceLockBackend(LockConnection connection, String keyPrefix, String handOverChannel,
            NodeIncarnation incarnation) {
        this(connection, keyPrefix, HandOverChannel.forEveryKey(handOverChannel), ReplicaAcks.NONE,
                DeploymentName.UNKNOWN, incarnation);
    }

    /**
     * A backend on Spring Boot's connection factory whose releases publish each key's
     * hand-overs where {@code handOverChannels} says: sharded pub/sub in a Redis Cluster
     * 7+ ({@link RedisHandOverNotifications}).
     * @param connectionFactory Spring Data Redis's connection factory; must be Lettuce
     * @param operationTimeout upper bound on each lock command
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param handOverChannels where a release of a key publishes that it handed the lock
     * over to a waiter
     * @param replicaAcks how many replicas must confirm each lock write
     * ({@link ReplicaAcks})
     * @throws IllegalStateException if the factory is not a
     * {@link LettuceConnectionFactory}
     */
    public LettuceLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout, String keyPrefix,
            Function<LockKey, ? extends HandOverChannel> handOverChannels, ReplicaAcks replicaAcks) {
        this(new LockConnection(lettuceClientOf(connectionFactory), operationTimeout), keyPrefix, handOverChannels,
                replicaAcks, DeploymentName.of(connectionFactory), null);
    }

    /**
     * A backend on a connection of its own making, publishing each key's hand-overs where
     * {@code handOverChannels} says.
     * @param connection the connection to run every lock command on; this backend starts
     * and closes it
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param handOverChannels where a release of a key publishes that it handed the lock
     * over to a waiter
     * @param replicaAcks how many replicas must confirm each lock write
     * ({@link ReplicaAcks})
     */
    public LettuceLockBackend(LockConnection connection, String keyPrefix,
            Function<LockKey, ? extends HandOverChannel> handOverChannels, ReplicaAcks replicaAcks) {
        this(connection, keyPrefix, handOverChannels, replicaAcks, DeploymentName.UNKNOWN, null);
    }

    private LettuceLockBackend(LockConnection connection, String keyPrefix,
            Function<LockKey, ? extends HandOverChannel> handOverChannels, ReplicaAcks replicaAcks, String name,
            NodeIncarnation incarnation) {
        super(new RedisLockProtocol(new LettuceTransport(connection), handOverChannels, replicaAcks, incarnation),
                keyPrefix, name);
        this.connection = connection;
        connection.connectInBackground();
    }

    private static java.util.function.Supplier<io.lettuce.core.AbstractRedisClient> lettuceClientOf(
            RedisConnectionFactory connectionFactory) {
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalStateException("LettuceLockBackend runs on Lettuce only, but the RedisConnectionFactory "
                    + "is a " + connectionFactory.getClass().getName() + ". Use SpringDataLockBackend, which runs on "
                    + "any connection factory (the auto-configuration picks it by itself).");
        }
        return lettuce::getRequiredNativeClient;
    }

    private volatile boolean running = true;

    /** Closes our connection; the client belongs to the connection factory. */
    @Override
    public void close() {
        running = false;
        connection.close();
    }

    /**
     * Nothing to do: the connection opens in the background as soon as the backend
     * exists.
     */
    @Override
    public void start() {
        running = true;
    }

    /**
     * Closes our connection while the connection factory still runs: stopping it shuts
     * its client down, and a Cluster connection that the client closes for us is closed
     * twice over, with a WARN.
     */
    @Override
    public void stop() {
        close();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /**
     * After the hand-over subscriber ({@code Integer.MAX_VALUE}), before the connection
     * factory (0).
     */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 1;
    }

    /**
     * Waits until the connection is open, at most until {@code deadline}
     * ({@link System#nanoTime}).
     * @return whether it is open
     */
    public boolean awaitConnected(long deadline) {
        return connection.awaitConnected(deadline);
    }

    /**
     * The hand-over channel of locks stored under {@code keyPrefix}, for example
     * {@code lock:released}.
     */
    public static String handOverChannel(String keyPrefix) {
        return HandOverSubscriber.handOverChannel(keyPrefix);
    }

    /**
     * {@link #tryAcquire(LockKey, String, long)} without waiting: the same
     * {@code SET NX PX GET}, or the acquire script on a server that refuses it. Blocking
     * (a {@code null} answer) where replicas must confirm the write, as {@code WAIT} is a
     * second round trip of its own.
     */
    @Override
    public CompletableFuture<AcquireResult> tryAcquireAsync(LockKey key, String token, long ttlMillis) {
        return protocol.tryAcquireAsync(key, token, ttlMillis);
    }

    /** {@link #release(LockKey, String)} without waiting. */
    @Override
    public CompletableFuture<Boolean> releaseAsync(LockKey key, String token) {
        return protocol.releaseAsync(key, token);
    }

    /**
     * A Redlock node's release: compare-and-delete and, if it deleted,
     * {@code PUBLISH channel hint} from the same script (redlock_release.lua), instead of
     * a {@code PUBLISH} of its own after the answer. For a node of a Redlock only: it
     * looks at no hand-over queue, so it hands nothing over, and costs the node less than
     * {@link #releaseAsync}, which looks for waiters to hand the lock to.
     *
     * <pre>{@code
     * node.releaseAndHintAsync(key, token, "lock:redlock-released", "8f3a...:lock:orders:42", true)
     * node.releaseAndHintAsync(key, token, null, null, false)   // sends no hint
     * }</pre>
     * @param channel where to send the release hint, or {@code null} (then {@code hint}
     * is ignored)
     * @param wakeLine whether to send it to the head of the key's wake-up line on this
     * node ({@link #tryAcquireOrWaitAsync}), on {@code <channel>:<waiter id>}, and to
     * {@code channel} only if nobody there listens; {@code false}: to {@code channel}
     * @return as {@link #releaseAsync}: {@code null} if it cannot be sent without
     * blocking now
     */
    public CompletableFuture<Boolean> releaseAndHintAsync(LockKey key, String token, String channel, String hint,
            boolean wakeLine) {
        return protocol.releaseAndHintAsync(key, token, channel, hint, wakeLine);
    }

    /** {@link #releaseAndHintAsync}, waiting for the answer as {@link #release} does. */
    public boolean releaseAndHint(LockKey key, String token, String channel, String hint, boolean wakeLine) {
        return protocol.releaseAndHint(key, token, channel, hint, wakeLine);
    }

    /**
     * A Redlock arbiter node's acquire (redlock_acquire.lua): {@code SET NX PX}, and if
     * the lock is taken, the application instance {@code waiterId} joins the key's
     * wake-up line on this node, or keeps its place there, for {@code aliveMillis}. The
     * node's next release ({@link #releaseAndHintAsync} with {@code wakeLine}) sends its
     * hint to the instance at the head of the line only. The line grants nothing: it only
     * decides whom a release wakes.
     *
     * <pre>{@code
     * arbiter.tryAcquireOrWaitAsync(key, token, 30_000, "5be1c0ffee", 250)
     * }</pre>
     * @return as {@link #tryAcquireAsync}: {@code null} if it cannot be sent without
     * blocking now
     */
    public CompletableFuture<AcquireResult> tryAcquireOrWaitAsync(LockKey key, String token, long ttlMillis,
            String waiterId, long aliveMillis) {
        return protocol.tryAcquireOrWaitAsync(key, token, ttlMillis, waiterId, aliveMillis);
    }

    /**
     * {@link #tryAcquireOrWaitAsync}, waiting for the answer as {@link #tryAcquire} does.
     */
    public AcquireResult tryAcquireOrWait(LockKey key, String token, long ttlMillis, String waiterId,
            long aliveMillis) {
        return protocol.tryAcquireOrWait(key, token, ttlMillis, waiterId, aliveMillis);
    }

    @Override
    public boolean raiseFencingCounter(LockKey key, String token, long fencingToken, long ttlMillis) {
        return protocol.raiseFencingCounter(key, token, fencingToken, ttlMillis);
    }

}
