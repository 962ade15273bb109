package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockKey;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;

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
 * {@code <token>:<fencing token>} on the release channel; with nobody queued it just deletes the
 * key and publishes nothing. The scripts ({@code acquire.lua}, {@code release.lua},
 * {@code renew.lua}, {@code cancel.lua}, {@code fence.lua}, and {@code fencing.lua} with the
 * fencing-token functions that the others share) sit next to this class and run with
 * {@code EVALSHA}, falling back to {@code EVAL} once per node.
 *
 * <p>The usual acquisition runs no script at all: a first attempt that needs no fencing token is a
 * bare {@code SET NX PX} ({@link #tryAcquireWithoutFencingToken}), and {@code fence.lua} issues the
 * token later if the holder asks for it. Drawing a token costs Redis more than the {@code SET}
 * itself (docs/benchmarks-analysis.md), and most holders never read it.
 *
 * <p>Why hand over instead of waking the waiters to race for the key: with 8 contenders on one key,
 * every release woke 7 clients, at most one of which could win, and the releaser, one round trip
 * away from the key, often re-took it before any of them (profile in docs/benchmarks-analysis.md).
 * A hand-over wakes one client, which owns the lock when the message arrives, and the queue makes
 * waits first come, first served.
 *
 * <p>Commands go through one dedicated Lettuce connection, opened from the Lettuce client that
 * Spring Boot's {@link LettuceConnectionFactory} built (so host, Sentinel or Cluster topology,
 * credentials, TLS and database all come from {@code spring.data.redis.*}). Lettuce connections
 * are thread-safe and pipeline concurrent commands, so one is enough; being our own, lock commands
 * never queue behind the application's slow commands. We use its asynchronous API so that each
 * command is bounded by the operation timeout here, whatever the client's own (often 60 s)
 * command timeout is: a hung Redis must fail guarded calls fast, not block them. Fetching a
 * Spring Data connection wrapper per command instead cost half the throughput at 8 threads.
 */
public final class RedisLockBackend implements LockBackend, AutoCloseable {

    /** Suffix of the fencing counter's key. */
    public static final String FENCE_SUFFIX = ":fence";

    /** Suffix of the wait queue: a sorted set of waiters' tokens by arrival. */
    public static final String QUEUE_SUFFIX = ":queue";

    /** Suffix of the waiters' entries: a hash of token to {@code <alive until ms>:<lease ms>}. */
    public static final String WAITING_SUFFIX = ":waiting";

    /**
     * The fencing counter outlives the lock so tokens keep increasing across acquisitions. Every
     * acquisition writes it with this expiry (or the lease, if longer), so it goes a day after the
     * key's last use and the server clock takes over (see fencing.lua).
     */
    private static final long FENCE_COUNTER_TTL_MILLIS = TimeUnit.DAYS.toMillis(1);
    private static final byte[] FENCE_COUNTER_TTL_BYTES = bytes(Long.toString(FENCE_COUNTER_TTL_MILLIS));

    /** Most keys renewed by one script call, so one call never blocks Redis for long. */
    private static final int MAX_RENEWALS_PER_CALL = 1000;

    private static final String FENCING = "fencing.lua";
    private static final LuaScript ACQUIRE = LuaScript.load("acquire.lua", FENCING);
    private static final LuaScript RELEASE = LuaScript.load("release.lua", FENCING);
    private static final LuaScript RENEW = LuaScript.load("renew.lua");
    private static final LuaScript CANCEL = LuaScript.load("cancel.lua", FENCING);
    private static final LuaScript FENCE = LuaScript.load("fence.lua", FENCING);
    private static final byte[] QUEUED = bytes("1");
    private static final byte[] NOT_QUEUED = bytes("0");

    private final LettuceConnectionFactory connectionFactory;
    private final long timeoutNanos;
    private final Duration operationTimeout;
    private final byte[] releaseChannel;
    private final Object connectMonitor = new Object();
    private volatile Connection connection;

    /**
     * @param connectionFactory Spring Data Redis's connection factory; must be Lettuce
     * @param operationTimeout upper bound on each lock command
     * @param releaseChannel where a release announces that it handed the lock to a waiter
     * @throws IllegalStateException if the factory is not a {@link LettuceConnectionFactory}
     */
    public RedisLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout,
            String releaseChannel) {
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalStateException("distributed-lock needs Spring Data Redis with Lettuce, but the "
                    + "RedisConnectionFactory is a " + connectionFactory.getClass().getName() + ". Use Lettuce (the "
                    + "default of spring-boot-starter-data-redis) or set distributed-lock.enabled=false.");
        }
        this.connectionFactory = lettuce;
        this.operationTimeout = operationTimeout;
        this.timeoutNanos = operationTimeout.toNanos();
        this.releaseChannel = bytes(releaseChannel);
    }

    /** Our connection and the client that opened it. */
    private record Connection(AbstractRedisClient client, StatefulConnection<byte[], byte[]> stateful,
            RedisClusterAsyncCommands<byte[], byte[]> commands, boolean cluster) {
    }

    /**
     * The connection, opened on first use. Reopened if the factory has replaced its client (it
     * builds a new one when restarted), since the old client's connections are closed.
     */
    private Connection connection() {
        Connection current = connection;
        AbstractRedisClient client = connectionFactory.getRequiredNativeClient();
        if (current != null && current.client() == client) {
            return current;
        }
        synchronized (connectMonitor) {
            current = connection;
            if (current == null || current.client() != client) {
                current = open(client);
                connection = current;
            }
            return current;
        }
    }

    private static Connection open(AbstractRedisClient client) {
        if (client instanceof RedisClusterClient clusterClient) {
            StatefulRedisClusterConnection<byte[], byte[]> cluster = clusterClient.connect(ByteArrayCodec.INSTANCE);
            return new Connection(client, cluster, cluster.async(), true);
        }
        StatefulRedisConnection<byte[], byte[]> standalone = ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
        return new Connection(client, standalone, standalone.async(), false);
    }

    /** Closes our connection; the client belongs to the connection factory. */
    @Override
    public void close() {
        synchronized (connectMonitor) {
            Connection current = connection;
            connection = null;
            if (current != null) {
                current.stateful().closeAsync();
            }
        }
    }

    /** The release channel of locks stored under {@code keyPrefix}, for example {@code lock:released}. */
    public static String releaseChannel(String keyPrefix) {
        return keyPrefix + "released";
    }

    @Override
    public AcquireAttempt tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued) {
        byte[][] args = { bytes(token), bytes(Long.toString(ttlMillis)), counterLifetime(ttlMillis),
                bytes(Long.toString(queueMillis)), queued ? QUEUED : NOT_QUEUED };
        Long result = call(key, "acquire", ACQUIRE, args, token);
        long value = result;
        return value > 0 ? new AcquireAttempt(value, 0) : new AcquireAttempt(0, -value);
    }

    /** A bare {@code SET NX PX}, sent as a command of its own: no script runs on the server. */
    @Override
    public boolean tryAcquireWithoutFencingToken(LockKey key, String token, long ttlMillis) {
        byte[] lock = bytes(key.redisKey());
        byte[] value = bytes(token);
        SetArgs nxPx = SetArgs.Builder.nx().px(ttlMillis);
        return run(key, "acquire", commands -> get(key, "acquire", commands.set(lock, value, nxPx)), token) != null;
    }

    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        return call(key, "fencing token", FENCE, new byte[][] { bytes(token), counterLifetime(ttlMillis) }, null);
    }

    @Override
    public boolean release(LockKey key, String token) {
        return call(key, "release", RELEASE, releaseArgs(token), null) == 1L;
    }

    @Override
    public long stopWaiting(LockKey key, String token) {
        return call(key, "cancel", CANCEL, new byte[][] { bytes(token) }, token);
    }

    /** Runs one of the per-key scripts, which all take the same four keys (see {@link #run}). */
    private Long call(LockKey key, String operation, LuaScript script, byte[][] args, String undoToken) {
        byte[][] keys = keys(key);
        return run(key, operation,
                commands -> await(key, operation, commands, script, ScriptOutputType.INTEGER, keys, args), undoToken);
    }

    /**
     * Runs one command on our connection and turns every failure into a {@link LockBackendException}.
     *
     * @param undoToken if the command fails, the token whose effects to undo: the command may have
     *        run even though its reply did not arrive in time, leaving us holding the lock or
     *        queued. Leaving the queue and releasing, without waiting, keeps the key from blocking
     *        everyone for a whole lease, and a release from handing the lock to a caller that left.
     */
    private <T> T run(LockKey key, String operation, Function<RedisClusterAsyncCommands<byte[], byte[]>, T> command,
            String undoToken) {
        try {
            RedisClusterAsyncCommands<byte[], byte[]> commands = connection().commands();
            try {
                return command.apply(commands);
            }
            catch (LockBackendException ex) {
                if (undoToken != null) {
                    byte[][] keys = keys(key);
                    // One connection runs commands in order: the cancel before the release.
                    commands.eval(CANCEL.source(), ScriptOutputType.INTEGER, keys, bytes(undoToken));
                    commands.eval(RELEASE.source(), ScriptOutputType.INTEGER, keys, releaseArgs(undoToken));
                }
                throw ex;
            }
        }
        catch (RuntimeException ex) {
            throw translate(key, operation, ex);
        }
    }

    @Override
    public List<RenewalOutcome> renew(List<LeaseRenewal> renewals) {
        RenewalOutcome[] outcomes = new RenewalOutcome[renewals.size()];
        try {
            Connection connection = connection();
            RedisClusterAsyncCommands<byte[], byte[]> commands = connection.commands();
            List<List<Integer>> batches = batches(renewals, connection.cluster());
            // Send every batch before waiting for any, so they share the connection's pipeline.
            List<Future<List<Object>>> replies = new ArrayList<>(batches.size());
            for (List<Integer> batch : batches) {
                replies.add(sendRenewal(commands, renewals, batch, false));
            }
            for (int b = 0; b < batches.size(); b++) {
                List<Integer> batch = batches.get(b);
                List<Object> result;
                try {
                    result = awaitRenewal(commands, renewals, batch, replies.get(b));
                }
                catch (RuntimeException ex) {
                    result = null;
                }
                for (int i = 0; i < batch.size(); i++) {
                    outcomes[batch.get(i)] = result == null ? RenewalOutcome.FAILED
                            : ((Long) result.get(i) == 1L ? RenewalOutcome.RENEWED : RenewalOutcome.LOST);
                }
            }
        }
        catch (RuntimeException ex) {
            for (int i = 0; i < outcomes.length; i++) {
                if (outcomes[i] == null) {
                    outcomes[i] = RenewalOutcome.FAILED;
                }
            }
        }
        return List.of(outcomes);
    }

    /** The lock, its fencing counter, its wait queue and its waiters' entries: one Cluster slot. */
    private static byte[][] keys(LockKey key) {
        String lock = key.redisKey();
        return new byte[][] { bytes(lock), bytes(lock + FENCE_SUFFIX), bytes(lock + QUEUE_SUFFIX),
                bytes(lock + WAITING_SUFFIX) };
    }

    /** The fencing counter's expiry: a day, or the lease if that is longer. */
    private static byte[] counterLifetime(long ttlMillis) {
        return ttlMillis > FENCE_COUNTER_TTL_MILLIS ? bytes(Long.toString(ttlMillis)) : FENCE_COUNTER_TTL_BYTES;
    }

    private byte[][] releaseArgs(String token) {
        return new byte[][] { bytes(token), releaseChannel, FENCE_COUNTER_TTL_BYTES };
    }

    /**
     * Groups renewals into script calls. In a Cluster one script may only touch keys of one slot,
     * so the groups follow slots; elsewhere any keys go together.
     */
    private static List<List<Integer>> batches(List<LeaseRenewal> renewals, boolean cluster) {
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < renewals.size(); i++) {
            int slot = cluster ? SlotHash.getSlot(renewals.get(i).key().redisKey()) : 0;
            bySlot.computeIfAbsent(slot, s -> new ArrayList<>()).add(i);
        }
        List<List<Integer>> batches = new ArrayList<>();
        for (List<Integer> group : bySlot.values()) {
            for (int from = 0; from < group.size(); from += MAX_RENEWALS_PER_CALL) {
                batches.add(group.subList(from, Math.min(group.size(), from + MAX_RENEWALS_PER_CALL)));
            }
        }
        return batches;
    }

    private static Future<List<Object>> sendRenewal(RedisClusterAsyncCommands<byte[], byte[]> commands,
            List<LeaseRenewal> renewals, List<Integer> batch, boolean eval) {
        byte[][] keys = new byte[batch.size()][];
        byte[][] args = new byte[batch.size() * 2][];
        for (int i = 0; i < batch.size(); i++) {
            LeaseRenewal renewal = renewals.get(batch.get(i));
            keys[i] = bytes(renewal.key().redisKey());
            args[2 * i] = bytes(renewal.token());
            args[2 * i + 1] = bytes(Long.toString(renewal.ttlMillis()));
        }
        return eval ? commands.eval(RENEW.source(), ScriptOutputType.MULTI, keys, args)
                : commands.evalsha(RENEW.sha1(), ScriptOutputType.MULTI, keys, args);
    }

    private List<Object> awaitRenewal(RedisClusterAsyncCommands<byte[], byte[]> commands,
            List<LeaseRenewal> renewals, List<Integer> batch, Future<List<Object>> reply) {
        LockKey first = renewals.get(batch.get(0)).key();
        try {
            return get(first, "renew", reply);
        }
        catch (NoScriptException ex) {
            return get(first, "renew", sendRenewal(commands, renewals, batch, true));
        }
    }

    private <T> T await(LockKey key, String operation, RedisClusterAsyncCommands<byte[], byte[]> commands,
            LuaScript script, ScriptOutputType type, byte[][] keys, byte[]... args) {
        try {
            return get(key, operation, commands.evalsha(script.sha1(), type, keys, args));
        }
        catch (NoScriptException ex) {
            // First use on this node (or after SCRIPT FLUSH / a restart): EVAL also caches it.
            return get(key, operation, commands.eval(script.source(), type, keys, args));
        }
    }

    private <T> T get(LockKey key, String operation, Future<T> future) {
        try {
            return future.get(timeoutNanos, TimeUnit.NANOSECONDS);
        }
        catch (TimeoutException ex) {
            future.cancel(false);
            throw new LockBackendException(key.name(), "Redis did not answer the " + operation + " of lock '"
                    + key.name() + "' (" + key.redisKey() + ") within distributed-lock.operation-timeout="
                    + operationTimeout + ". Is Redis reachable?", ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            future.cancel(false);
            throw new LockAcquisitionException(key.name(), "Interrupted during the " + operation + " of lock '"
                    + key.name() + "'.", ex);
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof RedisNoScriptException) {
                throw new NoScriptException();
            }
            throw translate(key, operation, ex.getCause());
        }
    }

    private RuntimeException translate(LockKey key, String operation, Throwable ex) {
        if (ex instanceof LockAcquisitionException lockException) {
            return lockException;
        }
        return new LockBackendException(key.name(), "Redis failed the " + operation + " of lock '" + key.name() + "' ("
                + key.redisKey() + "): " + ex.getMessage(), ex);
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    /** Signals NOSCRIPT internally so the caller can fall back to EVAL. */
    private static final class NoScriptException extends RuntimeException {
        NoScriptException() {
            super(null, null, false, false);
        }
    }
}
