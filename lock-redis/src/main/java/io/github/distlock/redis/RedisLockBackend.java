package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.NonBlockingLockBackend;
import io.github.distlock.core.QueueingLockBackend;
import io.github.distlock.redis.LockConnection.Reply;
import io.github.distlock.redis.LockConnection.ScriptCall;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.ArrayOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;

/**
 * Locks in one Redis deployment (standalone, Sentinel or Cluster), reached through Spring Data
 * Redis's {@link LettuceConnectionFactory}.
 *
 * <p>Wire format: the lock is a plain string {@code <prefix>{<key>}} set with
 * {@code SET NX PX}, so any client following the redis.io single-instance pattern excludes us and
 * is excluded by us. The fencing counter lives at {@code <prefix>{<key>}:fence}; callers that wait
 * queue in {@code <prefix>{<key>}:queue} (a sorted set of tokens by arrival) with their entries in
 * {@code <prefix>{<key>}:waiting}, all in the lock's Cluster slot. A release hands the lock to the
 * longest-waiting live waiter (it sets the key to that waiter's token) and publishes
 * {@code <SHA-1 of the token>:<fencing token>:<proof>} on the release channel (release.lua says why
 * the token itself is never published; in a Redis Cluster 7+ it is {@code SPUBLISH}ed on the lock's
 * slot channel instead, see {@link ReleaseNotifications}); with nobody queued it just deletes the
 * key and publishes nothing. The scripts ({@code acquire.lua}, {@code release.lua},
 * {@code renew.lua}, {@code cancel.lua}, {@code fence.lua}, and {@code fencing.lua} with the
 * fencing-token functions that the others share, and the read-only {@code inspect.lua} of the
 * Actuator's view) sit next to this class and run with {@code EVALSHA}, falling back to
 * {@code EVAL} once per node.
 *
 * <p>The usual acquisition runs no script at all: a first attempt that needs no fencing token is a
 * bare {@code SET NX PX GET} ({@link #tryAcquire(LockKey, String, long)}), and {@code fence.lua} issues
 * the token later if the holder asks for it. {@code GET} makes it idempotent: re-sent after its
 * reply was lost, it answers with our own token, which means "ours". Redis 6.2 refuses
 * {@code NX} with {@code GET}; there the first attempt runs {@code acquire.lua} instead. Drawing a token costs Redis more than the {@code SET}
 * itself (docs/benchmarks-analysis.md), and most holders never read it.
 *
 * <p>Why hand over instead of waking the waiters to race for the key: with 8 contenders on one key,
 * every release woke 7 clients, at most one of which could win, and the releaser, one round trip
 * away from the key, often re-took it before any of them (profile in docs/benchmarks-analysis.md).
 * A hand-over wakes one client, which owns the lock when the message arrives, and the queue makes
 * waits first come, first served.
 *
 * <p>Commands go through one dedicated Lettuce connection ({@link LockConnection}), opened from the
 * Lettuce client that Spring Boot's {@link LettuceConnectionFactory} built (so host, Sentinel or
 * Cluster topology, credentials, TLS and database all come from {@code spring.data.redis.*}).
 * Lettuce connections are thread-safe and pipeline concurrent commands, so one is enough; being our
 * own, lock commands never queue behind the application's slow commands. Each command is bounded
 * by the operation timeout, whatever the client's own (often 60 s) command timeout is: a hung Redis
 * must fail guarded calls fast, not block them. Fetching a Spring Data connection wrapper per
 * command instead cost half the throughput at 8 threads.
 */
public final class RedisLockBackend
        implements QueueingLockBackend, RaisableFencingLockBackend, InspectableLockBackend, NonBlockingLockBackend, SmartLifecycle,
        AutoCloseable {

    /** Suffix of the fencing counter's key. */
    public static final String FENCE_SUFFIX = ":fence";

    /** Suffix of the wait queue: a sorted set of waiters' tokens by arrival. */
    public static final String QUEUE_SUFFIX = ":queue";

    /** Suffix of the waiters' entries: a hash of token to {@code <alive until ms>:<lease ms>}. */
    public static final String WAITING_SUFFIX = ":waiting";

    /** Suffix of a Redlock wake-up line on its arbiter node: a sorted set of waiter ids by arrival (ms). */
    public static final String REDLOCK_LINE_SUFFIX = ":redlock-line";

    /** Suffix of the alive-until (ms) of each waiter in a Redlock wake-up line: a hash. */
    public static final String REDLOCK_ALIVE_SUFFIX = ":redlock-alive";

    private static final long FENCE_COUNTER_TTL_MILLIS = LockScripts.FENCE_COUNTER_TTL_MILLIS;
    private static final byte[] FENCE_COUNTER_TTL_BYTES = bytes(Long.toString(FENCE_COUNTER_TTL_MILLIS));
    private static final LuaScript ACQUIRE = LockScripts.ACQUIRE;
    private static final LuaScript RELEASE = LockScripts.RELEASE;
    private static final LuaScript REDLOCK_RELEASE = LockScripts.REDLOCK_RELEASE;
    private static final LuaScript REDLOCK_ACQUIRE = LockScripts.REDLOCK_ACQUIRE;
    private static final LuaScript RENEW = LockScripts.RENEW;
    private static final LuaScript CANCEL = LockScripts.CANCEL;
    private static final LuaScript FENCE = LockScripts.FENCE;
    private static final byte[] YES = bytes("1");
    private static final byte[] NO = bytes("0");
    private static final byte[] ZERO = bytes("0");
    private static final byte[] NX = bytes("NX");
    private static final byte[] PX = bytes("PX");
    private static final byte[] GET = bytes("GET");

    private final LockConnection connection;
    /** What the health check calls the node or Sentinel master; a Cluster's masters are named by address. */
    private final String name;
    private final String keyPrefix;
    private final Function<LockKey, ReleaseChannel> releaseChannels;
    /** Confirms lock writes with {@code WAIT}; {@code null} when no replica acks are asked for. */
    private final LettuceReplicaConfirmation confirmation;
    /** A Redlock node's own vote scripts, sent by digest only; {@code null} for any other backend. */
    private final NodeIncarnation incarnation;
    /** Set once a server refuses {@code SET NX GET} (Redis before 7.0): scripts take over. */
    private volatile boolean setNxGetRefused;

    /**
     * A backend on Spring Boot's connection factory, with a connection of its own opened from the
     * factory's Lettuce client.
     *
     * @param connectionFactory Spring Data Redis's connection factory; must be Lettuce
     * @param operationTimeout upper bound on each lock command
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param releaseChannel where a release announces that it handed the lock to a waiter
     * @throws IllegalStateException if the factory is not a {@link LettuceConnectionFactory}
     */
    public RedisLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout, String keyPrefix,
            String releaseChannel) {
        this(connectionFactory, operationTimeout, keyPrefix, ReleaseChannel.everyKeyOn(releaseChannel),
                ReplicaAcks.NONE);
    }

    /**
     * A backend on a connection of its own making: one per master for a backend that spans several
     * independent masters (Redlock), each with its own client.
     *
     * <pre>{@code
     * RedisClient client = RedisClient.create("redis://node-1:6379");
     * LockConnection connection = new LockConnection(() -> client, Duration.ofSeconds(1));
     * RedisLockBackend node = new RedisLockBackend(connection, "lock:", "lock:released");
     * }</pre>
     *
     * @param connection the connection to run every lock command on; this backend starts and closes it
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param releaseChannel where a release announces that it handed the lock to a waiter
     */
    public RedisLockBackend(LockConnection connection, String keyPrefix, String releaseChannel) {
        this(connection, keyPrefix, ReleaseChannel.everyKeyOn(releaseChannel), ReplicaAcks.NONE);
    }

    /**
     * A Redlock node that votes (acquires, renews, draws and raises fencing tokens) with this client's own
     * scripts, by digest only: a node that restarted or changed identity answers {@code NOSCRIPT} instead of
     * voting ({@link NodeIncarnation}). Load them with {@link NodeIncarnation#load} before the votes count.
     *
     * @param incarnation the scripts to vote with
     */
    public RedisLockBackend(LockConnection connection, String keyPrefix, String releaseChannel,
            NodeIncarnation incarnation) {
        this(connection, keyPrefix, ReleaseChannel.everyKeyOn(releaseChannel), ReplicaAcks.NONE,
                DeploymentName.UNKNOWN, incarnation);
    }

    /**
     * A backend on Spring Boot's connection factory whose releases announce each key's hand-overs
     * where {@code releaseChannels} says: sharded pub/sub in a Redis Cluster 7+
     * ({@link ReleaseNotifications}).
     *
     * @param connectionFactory Spring Data Redis's connection factory; must be Lettuce
     * @param operationTimeout upper bound on each lock command
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param releaseChannels where a release of a key announces that it handed the lock to a waiter
     * @param replicaAcks how many replicas must confirm each lock write ({@link LettuceReplicaConfirmation})
     * @throws IllegalStateException if the factory is not a {@link LettuceConnectionFactory}
     */
    public RedisLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout, String keyPrefix,
            Function<LockKey, ReleaseChannel> releaseChannels, ReplicaAcks replicaAcks) {
        this(new LockConnection(lettuceClientOf(connectionFactory), operationTimeout), keyPrefix, releaseChannels,
                replicaAcks, DeploymentName.of(connectionFactory), null);
    }

    /**
     * A backend on a connection of its own making, announcing each key's hand-overs where
     * {@code releaseChannels} says.
     *
     * @param connection the connection to run every lock command on; this backend starts and closes it
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param releaseChannels where a release of a key announces that it handed the lock to a waiter
     * @param replicaAcks how many replicas must confirm each lock write ({@link LettuceReplicaConfirmation})
     */
    public RedisLockBackend(LockConnection connection, String keyPrefix,
            Function<LockKey, ReleaseChannel> releaseChannels, ReplicaAcks replicaAcks) {
        this(connection, keyPrefix, releaseChannels, replicaAcks, DeploymentName.UNKNOWN, null);
    }

    private RedisLockBackend(LockConnection connection, String keyPrefix,
            Function<LockKey, ReleaseChannel> releaseChannels, ReplicaAcks replicaAcks, String name,
            NodeIncarnation incarnation) {
        this.connection = connection;
        this.incarnation = incarnation;
        this.name = name;
        this.keyPrefix = keyPrefix;
        this.releaseChannels = releaseChannels;
        this.confirmation = replicaAcks.enabled() ? new LettuceReplicaConfirmation(connection, replicaAcks) : null;
        connection.connectInBackground();
    }

    private static java.util.function.Supplier<io.lettuce.core.AbstractRedisClient> lettuceClientOf(
            RedisConnectionFactory connectionFactory) {
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalStateException("RedisLockBackend runs on Lettuce only, but the RedisConnectionFactory "
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

    /** Nothing to do: the connection opens in the background as soon as the backend exists. */
    @Override
    public void start() {
        running = true;
    }

    /**
     * Closes our connection while the connection factory still runs: stopping it shuts its client
     * down, and a Cluster connection that the client closes for us is closed twice over, with a WARN.
     */
    @Override
    public void stop() {
        close();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** After the release subscriber ({@code Integer.MAX_VALUE}), before the connection factory (0). */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 1;
    }

    /**
     * Waits until the connection is open, at most until {@code deadline} ({@link System#nanoTime}).
     *
     * @return whether it is open
     */
    public boolean awaitConnected(long deadline) {
        return connection.awaitConnected(deadline);
    }

    /** The release channel of locks stored under {@code keyPrefix}, for example {@code lock:released}. */
    public static String releaseChannel(String keyPrefix) {
        return RedisReleaseSubscriber.releaseChannel(keyPrefix);
    }

    @Override
    public LockKey lockKey(String name) {
        return RedisKeyNaming.lockKey(keyPrefix, name);
    }

    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        return confirmed(key, token, ttlMillis, acquireScript(key, token, ttlMillis, queueMillis, queued, fencingToken));
    }

    /**
     * An acquisition counts once enough replicas confirm it, when that is asked for; one that is no longer
     * ours by then (it expired, or a failover lost it) did not happen.
     */
    private AcquireResult confirmed(LockKey key, String token, long ttlMillis, AcquireResult attempt) {
        if (confirmation == null || !attempt.acquired()) {
            return attempt;
        }
        return confirmation.confirm(key, token, ttlMillis) ? attempt : AcquireResult.notAcquired(0, 0);
    }

    @Override
    public AcquireResult confirmHandOver(LockKey key, String token, long ttlMillis, long fencingToken) {
        if (confirmation == null) {
            return QueueingLockBackend.super.confirmHandOver(key, token, ttlMillis, fencingToken);
        }
        return confirmation.confirm(key, token, ttlMillis) ? AcquireResult.acquired(fencingToken, ttlMillis)
                : AcquireResult.notAcquired(0, 0);
    }

    /**
     * A bare {@code SET NX PX GET}, sent as a command of its own: no script runs on the server.
     * Answered with our own token, it was re-sent after a reconnect and its first delivery took the
     * lock: ours all the same, the lease counted from before the first delivery.
     */
    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
        if (incarnation != null) {
            return redlockAcquireResult(connection.script(key, "acquire", incarnation.scripts().vote(),
                    () -> new IntegerOutput<>(ByteArrayCodec.INSTANCE), redlockKeys(key, false),
                    voteArguments(token, ttlMillis), connection.deadline()).value(), ttlMillis);
        }
        if (!setNxGetRefused) {
            byte[] value = bytes(token);
            try {
                byte[] previous = connection.run(key, "acquire", CommandType.SET,
                        () -> new ValueOutput<>(ByteArrayCodec.INSTANCE), setNxGet(key, value, ttlMillis),
                        connection.deadline()).value();
                return confirmed(key, token, ttlMillis, previous == null || Arrays.equals(previous, value)
                        ? AcquireResult.acquired(0, ttlMillis) : AcquireResult.notAcquired(0, 0));
            }
            catch (LockBackendException ex) {
                if (!isSyntaxError(ex)) {
                    throw ex;
                }
                // Redis 6.2: NX and GET together are a syntax error, so nothing ran.
                setNxGetRefused = true;
            }
        }
        return confirmed(key, token, ttlMillis, acquireScript(key, token, ttlMillis, 0, false, false));
    }

    /**
     * {@link #tryAcquire(LockKey, String, long)} without waiting: the same {@code SET NX PX GET}, or the
     * acquire script on a server that refuses it. Blocking (a {@code null} answer) where replicas must
     * confirm the write, as {@code WAIT} is a second round trip of its own.
     */
    @Override
    public CompletableFuture<AcquireResult> tryAcquireAsync(LockKey key, String token, long ttlMillis) {
        if (confirmation != null) {
            return null;
        }
        if (incarnation != null) {
            CompletableFuture<Reply<Long>> reply = connection.scriptAsync(key, "acquire", incarnation.scripts().vote(),
                    () -> new IntegerOutput<>(ByteArrayCodec.INSTANCE), redlockKeys(key, false),
                    voteArguments(token, ttlMillis));
            return reply == null ? null : reply.thenApply(answer -> redlockAcquireResult(answer.value(), ttlMillis));
        }
        if (setNxGetRefused) {
            return acquireScriptAsync(key, token, ttlMillis);
        }
        byte[] value = bytes(token);
        CompletableFuture<Reply<byte[]>> reply = connection.runAsync(key, "acquire", CommandType.SET,
                () -> new ValueOutput<>(ByteArrayCodec.INSTANCE), setNxGet(key, value, ttlMillis));
        if (reply == null) {
            return null;
        }
        CompletableFuture<AcquireResult> result = new CompletableFuture<>();
        reply.whenComplete((answer, failure) -> {
            if (failure == null) {
                byte[] previous = answer.value();
                result.complete(previous == null || Arrays.equals(previous, value) ? AcquireResult.acquired(0, ttlMillis)
                        : AcquireResult.notAcquired(0, 0));
            }
            else if (failure instanceof LockBackendException ex && isSyntaxError(ex)) {
                // Redis 6.2: NX and GET together are a syntax error, so nothing ran: the script instead.
                setNxGetRefused = true;
                CompletableFuture<AcquireResult> script = acquireScriptAsync(key, token, ttlMillis);
                if (script == null) {
                    result.completeExceptionally(ex);
                }
                else {
                    script.whenComplete((acquired, scriptFailure) -> {
                        if (scriptFailure == null) {
                            result.complete(acquired);
                        }
                        else {
                            result.completeExceptionally(scriptFailure);
                        }
                    });
                }
            }
            else {
                result.completeExceptionally(failure);
            }
        });
        return result;
    }

    private CompletableFuture<AcquireResult> acquireScriptAsync(LockKey key, String token, long ttlMillis) {
        CompletableFuture<Reply<List<Object>>> reply = connection.scriptAsync(key, "acquire", ACQUIRE,
                () -> new ArrayOutput<>(ByteArrayCodec.INSTANCE), keys(key),
                acquireArguments(token, ttlMillis, 0, false, false));
        return reply == null ? null : reply.thenApply(answer -> acquireResult(answer.value()));
    }

    /** {@link #release(LockKey, String)} without waiting. */
    @Override
    public CompletableFuture<Boolean> releaseAsync(LockKey key, String token) {
        CompletableFuture<Reply<Long>> reply = connection.scriptAsync(key, "release", RELEASE,
                () -> new IntegerOutput<>(ByteArrayCodec.INSTANCE), keys(key),
                releaseChannels.apply(key).releaseArguments(bytes(token), FENCE_COUNTER_TTL_BYTES));
        return reply == null ? null : reply.thenApply(answer -> answer.value() == 1L || answer.resent());
    }

    /**
     * A Redlock node's release: compare-and-delete and, if it deleted, {@code PUBLISH channel hint}
     * from the same script (redlock_release.lua), instead of a {@code PUBLISH} of its own after the
     * answer. For a node of a Redlock only: it looks at no hand-over queue, so it hands nothing over,
     * and costs the node less than {@link #releaseAsync}, which looks for waiters to hand the lock to.
     *
     * <pre>{@code
     * node.releaseAndHintAsync(key, token, "lock:redlock-released", "8f3a...:lock:orders:42", true)
     * node.releaseAndHintAsync(key, token, null, null, false)   // announces nothing
     * }</pre>
     *
     * @param channel where to announce the release, or {@code null} (then {@code hint} is ignored)
     * @param wakeLine whether to announce it to the head of the key's wake-up line on this node
     *        ({@link #tryAcquireOrWaitAsync}), on {@code <channel>:<waiter id>}, and to {@code channel}
     *        only if nobody there listens; {@code false}: to {@code channel}
     * @return as {@link #releaseAsync}: {@code null} if it cannot be sent without blocking now
     */
    public CompletableFuture<Boolean> releaseAndHintAsync(LockKey key, String token, String channel, String hint,
            boolean wakeLine) {
        CompletableFuture<Reply<Long>> reply = connection.scriptAsync(key, "release", REDLOCK_RELEASE,
                () -> new IntegerOutput<>(ByteArrayCodec.INSTANCE), redlockKeys(key, channel != null && wakeLine),
                redlockReleaseArguments(token, channel, hint));
        return reply == null ? null : reply.thenApply(answer -> answer.value() == 1L || answer.resent());
    }

    /** {@link #releaseAndHintAsync}, waiting for the answer as {@link #release} does. */
    public boolean releaseAndHint(LockKey key, String token, String channel, String hint, boolean wakeLine) {
        Reply<Long> reply = connection.script(key, "release", REDLOCK_RELEASE,
                () -> new IntegerOutput<>(ByteArrayCodec.INSTANCE), redlockKeys(key, channel != null && wakeLine),
                redlockReleaseArguments(token, channel, hint), connection.deadline());
        return reply.value() == 1L || reply.resent();
    }

    private static byte[][] redlockReleaseArguments(String token, String channel, String hint) {
        return channel == null ? new byte[][] { bytes(token) }
                : new byte[][] { bytes(token), bytes(channel), bytes(hint) };
    }

    /**
     * A Redlock arbiter node's acquire (redlock_acquire.lua): {@code SET NX PX}, and if the lock is
     * taken, the application instance {@code waiterId} joins the key's wake-up line on this node, or
     * keeps its place there, for {@code aliveMillis}. The node's next release
     * ({@link #releaseAndHintAsync} with {@code wakeLine}) announces itself to the instance at the
     * head of the line only. The line grants nothing: it only decides whom a release wakes.
     *
     * <pre>{@code
     * arbiter.tryAcquireOrWaitAsync(key, token, 30_000, "5be1c0ffee", 250)
     * }</pre>
     *
     * @return as {@link #tryAcquireAsync}: {@code null} if it cannot be sent without blocking now
     */
    public CompletableFuture<AcquireResult> tryAcquireOrWaitAsync(LockKey key, String token, long ttlMillis,
            String waiterId, long aliveMillis) {
        CompletableFuture<Reply<Long>> reply = connection.scriptAsync(key, "acquire", arbiterVote(),
                () -> new IntegerOutput<>(ByteArrayCodec.INSTANCE), redlockKeys(key, true),
                redlockAcquireArguments(token, ttlMillis, waiterId, aliveMillis));
        return reply == null ? null : reply.thenApply(answer -> redlockAcquireResult(answer.value(), ttlMillis));
    }

    /** {@link #tryAcquireOrWaitAsync}, waiting for the answer as {@link #tryAcquire} does. */
    public AcquireResult tryAcquireOrWait(LockKey key, String token, long ttlMillis, String waiterId,
            long aliveMillis) {
        Reply<Long> reply = connection.script(key, "acquire", arbiterVote(),
                () -> new IntegerOutput<>(ByteArrayCodec.INSTANCE), redlockKeys(key, true),
                redlockAcquireArguments(token, ttlMillis, waiterId, aliveMillis), connection.deadline());
        return redlockAcquireResult(reply.value(), ttlMillis);
    }

    private LuaScript arbiterVote() {
        return incarnation != null ? incarnation.scripts().arbiterVote() : REDLOCK_ACQUIRE;
    }

    private static byte[][] voteArguments(String token, long ttlMillis) {
        return new byte[][] { bytes(token), bytes(Long.toString(ttlMillis)) };
    }

    private static byte[][] redlockAcquireArguments(String token, long ttlMillis, String waiterId, long aliveMillis) {
        return new byte[][] { bytes(token), bytes(Long.toString(ttlMillis)), bytes(waiterId),
                bytes(Long.toString(aliveMillis)) };
    }

    private static AcquireResult redlockAcquireResult(long granted, long ttlMillis) {
        return granted == 1L ? AcquireResult.acquired(0, ttlMillis) : AcquireResult.notAcquired(0, 0);
    }

    /** The lock and, with {@code line}, its Redlock wake-up line on this node. */
    private static byte[][] redlockKeys(LockKey key, boolean line) {
        String lock = key.storeKey();
        if (!line) {
            return new byte[][] { bytes(lock) };
        }
        return new byte[][] { bytes(lock), bytes(lock + REDLOCK_LINE_SUFFIX), bytes(lock + REDLOCK_ALIVE_SUFFIX) };
    }

    private static boolean isSyntaxError(LockBackendException ex) {
        return ex.getCause() != null && ex.getCause().getMessage() != null
                && ex.getCause().getMessage().contains("syntax error");
    }

    /** {@code SET key value NX PX ttl GET}: takes the lock if free, and answers what it held before. */
    private static CommandArgs<byte[], byte[]> setNxGet(LockKey key, byte[] value, long ttlMillis) {
        return new CommandArgs<>(ByteArrayCodec.INSTANCE).addKey(bytes(key.storeKey())).add(value).add(NX).add(PX)
                .add(ttlMillis).add(GET);
    }

    private AcquireResult acquireScript(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        return acquireResult(script(key, "acquire", ACQUIRE,
                acquireArguments(token, ttlMillis, queueMillis, queued, fencingToken)).value());
    }

    private static byte[][] acquireArguments(String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        return new byte[][] { bytes(token), bytes(Long.toString(ttlMillis)), counterLifetime(ttlMillis),
                bytes(Long.toString(queueMillis)), queued ? YES : NO, fencingToken ? YES : NO };
    }

    /** What the acquire script's array answer says. */
    private static AcquireResult acquireResult(List<Object> reply) {
        if ((Long) reply.get(0) == 1L) {
            return AcquireResult.acquired((Long) reply.get(1), (Long) reply.get(2));
        }
        return AcquireResult.notAcquired((Long) reply.get(1), (Long) reply.get(2));
    }

    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        return connection.script(key, "fencing token", incarnation != null ? incarnation.scripts().fence() : FENCE,
                () -> new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                keys(key), new byte[][] { bytes(token), counterLifetime(ttlMillis) }, connection.deadline()).value();
    }

    @Override
    public boolean raiseFencingCounter(LockKey key, String token, long fencingToken, long ttlMillis) {
        String lock = key.storeKey();
        return connection.script(key, "fencing counter",
                incarnation != null ? incarnation.scripts().raiseFence() : LockScripts.RAISE_FENCE,
                () -> new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                new byte[][] { bytes(lock), bytes(lock + FENCE_SUFFIX) },
                new byte[][] { bytes(token), bytes(Long.toString(fencingToken)), counterLifetime(ttlMillis) },
                connection.deadline()).value() == 1L;
    }

    /**
     * Compare-and-delete (or hand over). "Not ours" from a release that Lettuce re-sent after a
     * reconnect means its first delivery most likely ran and released the lock; there is no way to
     * tell it from a lock lost in that very moment, and calling a successful release a loss would
     * fail work that ran under the lock, so it counts as released.
     */
    @Override
    public boolean release(LockKey key, String token) {
        Reply<Long> reply = connection.script(key, "release", RELEASE,
                () -> new IntegerOutput<>(ByteArrayCodec.INSTANCE), keys(key),
                releaseChannels.apply(key).releaseArguments(bytes(token), FENCE_COUNTER_TTL_BYTES),
                connection.deadline());
        return reply.value() == 1L || reply.resent();
    }

    @Override
    public AcquireResult stopWaiting(LockKey key, String token, long ttlMillis) {
        List<Object> reply = script(key, "cancel", CANCEL, new byte[][] { bytes(token), counterLifetime(ttlMillis) })
                .value();
        if ((Long) reply.get(0) == 1L) {
            return AcquireResult.acquired((Long) reply.get(1), (Long) reply.get(2));
        }
        return AcquireResult.notAcquired(0, 0);
    }

    /** Runs one of the per-key scripts that answer with an array; they all take the same four keys. */
    private Reply<List<Object>> script(LockKey key, String operation, LuaScript script, byte[][] args) {
        return connection.script(key, operation, script, () -> new ArrayOutput<>(ByteArrayCodec.INSTANCE), keys(key),
                args, connection.deadline());
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        List<List<Integer>> batches = LockScripts.batches(renewals, connection.isCluster());
        if (confirmation != null && !renewals.isEmpty()) {
            confirmation.renew(renewals, batches, outcomes);
            return;
        }
        List<ScriptCall> calls = new ArrayList<>(batches.size());
        for (List<Integer> batch : batches) {
            calls.add(renewalCall(renewals, batch));
        }
        connection.scripts("renew", incarnation != null ? incarnation.scripts().renew() : RENEW,
                () -> new ArrayOutput<>(ByteArrayCodec.INSTANCE), calls,
                connection.deadline(), (b, result) -> {
                    List<Integer> batch = batches.get(b);
                    for (int i = 0; i < batch.size(); i++) {
                        outcomes.outcome(batch.get(i), result == null ? RenewalOutcome.FAILED
                                : ((Long) result.get(i) == 1L ? RenewalOutcome.RENEWED : RenewalOutcome.LOST));
                    }
                });
    }

    /** One script ({@code inspect.lua}) reads the PTTL, queue and counter: it never reads the token. */
    @Override
    public LockState inspect(LockKey key) {
        List<Object> reply = script(key, "inspection", LockScripts.INSPECT, new byte[0][]).value();
        return LockScripts.lockState(reply);
    }

    /**
     * A {@code PING} on the lock connection; in a Cluster, one to every master that serves slots,
     * side by side. Every master holds a share of the locks, so all of them must answer.
     */
    @Override
    public Reachability ping() {
        List<NodeReachability> masters = connection.pingEachMaster(name);
        return new Reachability(masters, masters.size());
    }

    /** The lock, its fencing counter, its wait queue and its waiters' entries: one Cluster slot. */
    private static byte[][] keys(LockKey key) {
        String lock = key.storeKey();
        return new byte[][] { bytes(lock), bytes(lock + FENCE_SUFFIX), bytes(lock + QUEUE_SUFFIX),
                bytes(lock + WAITING_SUFFIX) };
    }

    /** The fencing counter's expiry: a day, or the lease if that is longer. */
    private static byte[] counterLifetime(long ttlMillis) {
        return ttlMillis > FENCE_COUNTER_TTL_MILLIS ? bytes(Long.toString(ttlMillis)) : FENCE_COUNTER_TTL_BYTES;
    }

    private static ScriptCall renewalCall(List<LeaseRenewal> renewals, List<Integer> batch) {
        byte[][] keys = new byte[batch.size()][];
        byte[][] args = new byte[batch.size() * 2][];
        for (int i = 0; i < batch.size(); i++) {
            LeaseRenewal renewal = renewals.get(batch.get(i));
            keys[i] = bytes(renewal.key().storeKey());
            args[2 * i] = bytes(renewal.token());
            args[2 * i + 1] = bytes(Long.toString(renewal.ttlMillis()));
        }
        return new ScriptCall(renewals.get(batch.get(0)).key(), keys, args);
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
