package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.InspectableLockBackend.NodeReachability;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.RedisLockTransport.RenewalCall;
import io.github.distlock.redis.RedisLockTransport.Reply;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.CommandWrapper;
import io.netty.buffer.ByteBuf;
import io.netty.util.Timeout;

/**
 * Our own connection to one Redis deployment (a node, a Sentinel-managed master or a
 * Cluster), and the one way lock commands are run on it.
 *
 * <p>
 * What it guarantees to the backend:
 * <ul>
 * <li><b>Bounded.</b> Every call, connecting included, returns within the operation
 * timeout (or the deadline given), whatever the client's own timeouts are. Connecting
 * runs in the background: every caller waits for the same attempt, each only as long as
 * its own bound, and a failed attempt fails the callers of the next second at once
 * instead of queueing them behind a new one.</li>
 * <li><b>Not interruptible.</b> A call waits for its reply even if the calling thread is
 * interrupted, and restores the flag afterwards. A lock command whose reply is dropped
 * halfway leaves a key nobody knows about; the interrupt is the caller's to honour once
 * the outcome is known.</li>
 * <li><b>Re-sends are reported.</b> Lettuce re-sends a command whose reply was lost to a
 * reconnect (at-least-once). {@link Reply#resent()} says whether that happened, so the
 * caller can read an answer like "the lock is no longer ours" as "our first delivery
 * released it".</li>
 * <li><b>Scripts by digest.</b> {@code EVALSHA}, and {@code EVAL} once on a node that
 * does not have the script yet.</li>
 * </ul>
 *
 * <p>
 * It is the piece that runs Redis commands for every Lettuce-based backend: a backend
 * over several independent masters makes one per master, each from its own client, and
 * gives each to a {@link LettuceLockBackend} (through {@link LettuceTransport}).
 *
 * <pre>{@code
 * RedisClient client = RedisClient.create("redis://node-1:6379");
 * LockConnection connection = new LockConnection(() -> client, Duration.ofMillis(500));
 * }</pre>
 */
public final class LockConnection implements AutoCloseable {

    /**
     * How long a failed connect fails the callers that follow at once, rather than
     * retrying.
     */
    private static final long FAIL_FAST_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Supplier<AbstractRedisClient> clients;

    private final Duration operationTimeout;

    /** The property that sets the bound, for messages. */
    private final String timeoutProperty;

    /** Where the credentials are set, for messages about refused ones. */
    private final String credentials;

    /**
     * Says so when Redis answers a batch of renewals ({@link #scripts}) with an error.
     */
    private final RenewalRefusalWarnings renewalRefusals;

    private final long timeoutNanos;

    private final Object monitor = new Object();

    /**
     * The latest connect attempt; guarded by {@code monitor}, read without it on the fast
     * path.
     */
    private volatile Attempt attempt;

    private volatile boolean closed;

    /**
     * @param clients the client to open the connection from, asked on every call: a
     * connection factory that restarts builds a new client, whose connection then
     * replaces ours
     * @param operationTimeout the bound of every call
     */
    public LockConnection(Supplier<AbstractRedisClient> clients, Duration operationTimeout) {
        this(clients, operationTimeout, "distributed-lock.operation-timeout");
    }

    /**
     * @param clients the client to open the connection from, asked on every call
     * @param operationTimeout the bound of every call
     * @param timeoutProperty the property that sets the bound, named in messages, for
     * example {@code distributed-lock.redlock.node-timeout}
     */
    public LockConnection(Supplier<AbstractRedisClient> clients, Duration operationTimeout, String timeoutProperty) {
        this(clients, operationTimeout, timeoutProperty, RedisErrorReply.SPRING_DATA_REDIS_CREDENTIALS);
    }

    /**
     * @param clients the client to open the connection from, asked on every call
     * @param operationTimeout the bound of every call
     * @param timeoutProperty the property that sets the bound, named in messages
     * @param credentials where the user and password are set, named when Redis refuses
     * them, for example {@link RedisErrorReply#SPRING_DATA_REDIS_CREDENTIALS}
     */
    public LockConnection(Supplier<AbstractRedisClient> clients, Duration operationTimeout, String timeoutProperty,
            String credentials) {
        this.timeoutProperty = timeoutProperty;
        this.credentials = credentials;
        this.renewalRefusals = new RenewalRefusalWarnings(credentials);
        this.clients = clients;
        this.operationTimeout = operationTimeout;
        this.timeoutNanos = operationTimeout.toNanos();
    }

    /** An open connection and the client that opened it. */
    record Open(AbstractRedisClient client, StatefulConnection<byte[], byte[]> stateful) {
    }

    /** One connect, shared by every caller that arrives while it runs. */
    private record Attempt(AbstractRedisClient client, CompletableFuture<Open> future, AtomicLong failedAt) {
    }

    /**
     * Starts connecting in the background, so the first lock call does not pay for it (a
     * cold client's first connect can take longer than a short operation timeout). A
     * failure here costs nothing: the first call connects again.
     */
    void connectInBackground() {
        try {
            newAttemptIfNeeded(clients.get());
        }
        catch (RuntimeException ex) {
            // The client is not there yet (a factory that is not started): the first call
            // connects.
        }
    }

    /**
     * Waits until the connection is open, at most until {@code deadline} (a
     * {@link System#nanoTime} value), starting a connect if none is under way. For a
     * start-up that should not answer its first calls with "could not connect" merely
     * because connecting takes longer than one call's bound.
     * @return whether it is open
     */
    public boolean awaitConnected(long deadline) {
        try {
            AbstractRedisClient client = clients.get();
            Attempt current = attempt;
            if (current == null || current.client() != client || hasExpiredFailure(current)) {
                current = newAttemptIfNeeded(client);
            }
            awaitUninterruptibly(current.future(), deadline);
            return true;
        }
        catch (TimeoutException | ExecutionException | RuntimeException ex) {
            return false;
        }
    }

    /**
     * Reads a section of {@code INFO} (for example {@code server}), bounded like any
     * call.
     * @throws LockBackendException if Redis does not answer in time
     */
    public String info(String section) {
        LockKey subject = new LockKey("INFO " + section, "");
        return run(subject, "INFO", CommandType.INFO, () -> new StatusOutput<>(ByteArrayCodec.INSTANCE),
                new CommandArgs<>(ByteArrayCodec.INSTANCE).add(section), deadline())
            .value();
    }

    /**
     * Loads {@code script} into the node's script cache ({@code SCRIPT LOAD}), bounded
     * like any call: how an {@link LuaScript#incarnation incarnation script} gets there.
     * @throws LockBackendException if Redis does not answer in time or refuses
     */
    void load(LuaScript script) {
        LockKey subject = new LockKey("SCRIPT LOAD " + script, "");
        run(subject, "SCRIPT LOAD", CommandType.SCRIPT, () -> new StatusOutput<>(ByteArrayCodec.INSTANCE),
                new CommandArgs<>(ByteArrayCodec.INSTANCE).add("LOAD").add(script.sourceBytes()), deadline());
    }

    /**
     * Sends {@code PUBLISH channel message} if the connection is open, without waiting
     * for the reply: for Redlock's release hints, which are only ever hints, so a slow or
     * lost one costs the caller nothing and a closed connection skips it.
     */
    public void publishReleaseHint(String channel, String message) {
        Attempt current = attempt;
        if (closed || current == null || !current.future().isDone() || current.future().isCompletedExceptionally()) {
            return;
        }
        try {
            CommandArgs<byte[], byte[]> args = new CommandArgs<>(ByteArrayCodec.INSTANCE)
                .add(channel.getBytes(StandardCharsets.UTF_8))
                .add(message.getBytes(StandardCharsets.UTF_8));
            send(current.future().join(), CommandType.PUBLISH, new IntegerOutput<>(ByteArrayCodec.INSTANCE), args);
        }
        catch (RuntimeException ex) {
            // A connection being closed or replaced: the waiters that this would have
            // woken poll.
        }
    }

    /**
     * @deprecated use {@link #publishReleaseHint}: the same command
     */
    @Deprecated(since = "0.1.0")
    public void publishHint(String channel, String message) {
        publishReleaseHint(channel, message);
    }

    /**
     * Pings the deployment for the health check, all within one operation timeout: the
     * node (or Sentinel-managed master) once, and in a Cluster every master that serves
     * slots, side by side, each by its address. Never throws: a failure is the answer, in
     * plain words.
     * @param name what to call the deployment when it is not a Cluster (or the Cluster
     * cannot be reached at all), for example {@code 127.0.0.1:6379}
     */
    List<NodeReachability> pingEachMaster(String name) {
        long start = System.nanoTime();
        long deadline = start + timeoutNanos;
        LockKey subject = new LockKey("health check", "");
        Open open;
        try {
            open = open(subject, "health check", deadline);
            if (!(open.stateful() instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster)) {
                run(subject, "health check", CommandType.PING, () -> new StatusOutput<>(ByteArrayCodec.INSTANCE),
                        new CommandArgs<>(ByteArrayCodec.INSTANCE), deadline);
                return List.of(new NodeReachability(name, true, Duration.ofNanos(System.nanoTime() - start), null));
            }
            return pingEachMaster(cluster, start, deadline);
        }
        catch (LockBackendException ex) {
            return List.of(new NodeReachability(name, false, Duration.ofNanos(System.nanoTime() - start),
                    inPlainWords(ex.getCause())));
        }
    }

    private List<NodeReachability> pingEachMaster(StatefulRedisClusterConnection<byte[], byte[]> cluster, long start,
            long deadline) {
        List<String> names = new ArrayList<>();
        List<CompletableFuture<Long>> answeredAt = new ArrayList<>();
        for (RedisClusterNode node : cluster.getPartitions()) {
            // A master without slots serves no lock: an old master that a replica
            // replaced, say.
            if (!node.getRole().isUpstream() || node.getSlots().isEmpty()) {
                continue;
            }
            names.add(node.getUri().getHost() + ":" + node.getUri().getPort());
            CompletableFuture<Long> pong = new CompletableFuture<>();
            cluster.getConnectionAsync(node.getNodeId())
                .thenCompose(connection -> connection.async().ping())
                .whenComplete((reply, failure) -> {
                    if (failure != null) {
                        pong.completeExceptionally(failure instanceof CompletionException && failure.getCause() != null
                                ? failure.getCause() : failure);
                    }
                    else {
                        pong.complete(System.nanoTime());
                    }
                });
            answeredAt.add(pong);
        }
        List<NodeReachability> masters = new ArrayList<>(names.size());
        for (int i = 0; i < names.size(); i++) {
            try {
                long at = awaitUninterruptibly(answeredAt.get(i), deadline);
                masters.add(new NodeReachability(names.get(i), true, Duration.ofNanos(at - start), null));
            }
            catch (TimeoutException | ExecutionException ex) {
                Throwable cause = ex instanceof ExecutionException ? ex.getCause() : ex;
                masters.add(new NodeReachability(names.get(i), false, Duration.ofNanos(System.nanoTime() - start),
                        inPlainWords(cause)));
            }
        }
        return masters;
    }

    /**
     * Why a call failed, for the health check: without the lock's name, which a ping does
     * not have.
     */
    private String inPlainWords(Throwable cause) {
        return LockCommandErrors.inPlainWords(cause, bound(), credentials);
    }

    /**
     * How each call is bounded, for messages:
     * {@code distributed-lock.operation-timeout=PT2S}.
     */
    String bound() {
        return LockCommandErrors.bound(timeoutProperty, operationTimeout);
    }

    /** The bound of each call, as configured, for messages. */
    Duration operationTimeout() {
        return operationTimeout;
    }

    /** The property that sets the bound, for messages. */
    String timeoutProperty() {
        return timeoutProperty;
    }

    /** Where the credentials are set, for messages about refused ones. */
    String credentials() {
        return credentials;
    }

    /** Says so when Redis answers a renewal with an error. */
    RenewalRefusalWarnings renewalRefusals() {
        return renewalRefusals;
    }

    /** The bound of one call, from now. */
    long deadline() {
        return System.nanoTime() + timeoutNanos;
    }

    /**
     * Whether the connection goes to a Redis Cluster, where one script may touch one slot
     * only.
     */
    boolean isCluster() {
        return clients.get() instanceof RedisClusterClient;
    }

    /**
     * The open connection, waiting at most until {@code deadline} for it to open.
     * @throws LockBackendException if it does not open in time, or failed to less than a
     * second ago
     */
    Open open(LockKey key, String operation, long deadline) {
        AbstractRedisClient client = clients.get();
        Attempt current = attempt;
        if (current == null || current.client() != client || hasExpiredFailure(current)) {
            current = newAttemptIfNeeded(client);
        }
        CompletableFuture<Open> future = current.future();
        try {
            return awaitUninterruptibly(future, deadline);
        }
        catch (TimeoutException ex) {
            throw LockCommandErrors.notConnected(key, operation, bound(), ex, credentials);
        }
        catch (ExecutionException ex) {
            throw LockCommandErrors.notConnected(key, operation, bound(), ex.getCause(), credentials);
        }
    }

    private static boolean hasExpiredFailure(Attempt current) {
        long failedAt = current.failedAt().get();
        return failedAt != 0 && System.nanoTime() - failedAt > FAIL_FAST_NANOS;
    }

    private Attempt newAttemptIfNeeded(AbstractRedisClient client) {
        synchronized (monitor) {
            Attempt current = attempt;
            if (current != null && current.client() == client && !hasExpiredFailure(current)) {
                return current;
            }
            if (closed) {
                return new Attempt(client,
                        CompletableFuture.failedFuture(new IllegalStateException("The lock backend is closed")),
                        new AtomicLong(System.nanoTime()));
            }
            if (current != null && current.client() != client) {
                // The factory was restarted: the old client's connections are closed with
                // it.
                current.future().thenAccept(old -> old.stateful().closeAsync());
            }
            Attempt next = new Attempt(client, new CompletableFuture<>(), new AtomicLong());
            attempt = next;
            Thread connector = new Thread(() -> connect(next), "distributed-lock-connect");
            connector.setDaemon(true);
            connector.start();
            return next;
        }
    }

    /**
     * Connects on a thread of its own: Lettuce's connect blocks for the client's connect
     * and command timeouts (a minute by default against a hung server), which no caller
     * may have to wait for.
     */
    private void connect(Attempt next) {
        try {
            Open open;
            if (next.client() instanceof RedisClusterClient cluster) {
                open = new Open(next.client(), cluster.connect(ByteArrayCodec.INSTANCE));
            }
            else {
                open = new Open(next.client(), ((RedisClient) next.client()).connect(ByteArrayCodec.INSTANCE));
            }
            if (closed) {
                open.stateful().closeAsync();
            }
            next.future().complete(open);
        }
        catch (RuntimeException ex) {
            next.failedAt().set(System.nanoTime());
            next.future().completeExceptionally(ex);
        }
    }

    /**
     * Runs one command and waits for its reply until {@code deadline}.
     * @param key the lock, for messages and for routing in a Cluster (the first key of
     * {@code args})
     * @param operation what it does, for messages: "acquire", "release", ...
     * @throws LockBackendException if Redis does not answer in time or answers with an
     * error; the command may have run all the same
     */
    <T> Reply<T> run(LockKey key, String operation, CommandType type, Supplier<CommandOutput<byte[], byte[], T>> output,
            CommandArgs<byte[], byte[]> args, long deadline) {
        Open open = open(key, operation, deadline);
        Sent<T> sent = send(open, type, output.get(), args);
        try {
            return new Reply<>(await(key, operation, sent.command(), deadline), sent.sends().get() > 1);
        }
        catch (NoScriptException ex) {
            throw new LockBackendException(key.name(),
                    "Redis answered NOSCRIPT to the " + operation + " of lock " + key.printableName(), ex);
        }
    }

    /**
     * Runs a script by its digest, and by its source on a node that does not have it
     * cached (first use, or after a restart or {@code SCRIPT FLUSH}). The output is made
     * anew for each send.
     */
    <T> Reply<T> script(LockKey key, String operation, LuaScript script,
            Supplier<CommandOutput<byte[], byte[], T>> output, byte[][] keys, byte[][] args, long deadline) {
        Open open = open(key, operation, deadline);
        Sent<T> sent = send(open, CommandType.EVALSHA, output.get(), scriptArgs(script.sha1Bytes(), keys, args));
        try {
            return new Reply<>(await(key, operation, sent.command(), deadline), sent.sends().get() > 1);
        }
        catch (NoScriptException ex) {
            if (script.cachedOnly()) {
                throw script.notCached(key, operation);
            }
            Sent<T> again = send(open, CommandType.EVAL, output.get(), scriptArgs(script.sourceBytes(), keys, args));
            return new Reply<>(await(key, operation, again.command(), deadline), again.sends().get() > 1);
        }
    }

    /**
     * Sends one command and returns at once, without a thread waiting for the reply: the
     * reply completes the future, on a Lettuce I/O thread. For a caller that asks several
     * independent nodes at once (Redlock), which would otherwise need a thread per node
     * to wait on. Bounded like {@link #run}: a command with no reply within the operation
     * timeout is cancelled (so it is not re-sent after a reconnect) and fails the future
     * with a {@link LockBackendException}; whatever continues after the future completes
     * must not block, as it may run on the I/O thread.
     * @return the reply, or {@code null} if the call cannot be sent at once (the
     * connection is not open yet, or failed, or goes to a Cluster, whose refusals are
     * retried by a caller that may block): make it with {@link #run} on a thread that may
     * block
     */
    <T> CompletableFuture<Reply<T>> runAsync(LockKey key, String operation, CommandType type,
            Supplier<CommandOutput<byte[], byte[], T>> output, CommandArgs<byte[], byte[]> args) {
        Open open = openNow();
        if (open == null) {
            return null;
        }
        CompletableFuture<Reply<T>> reply = new CompletableFuture<>();
        bound(key, operation, send(open, type, output.get(), args), open, reply, failure -> false);
        return reply;
    }

    /**
     * {@link #script} without waiting, as {@link #runAsync}: by digest, and by its source
     * on a node that does not have it cached.
     * @return the reply, or {@code null} if the call cannot be sent at once (see
     * {@link #runAsync})
     */
    <T> CompletableFuture<Reply<T>> scriptAsync(LockKey key, String operation, LuaScript script,
            Supplier<CommandOutput<byte[], byte[], T>> output, byte[][] keys, byte[][] args) {
        Open open = openNow();
        if (open == null) {
            return null;
        }
        CompletableFuture<Reply<T>> reply = new CompletableFuture<>();
        Sent<T> sent = send(open, CommandType.EVALSHA, output.get(), scriptArgs(script.sha1Bytes(), keys, args));
        bound(key, operation, sent, open, reply, failure -> {
            if (!(failure instanceof RedisNoScriptException)) {
                return false;
            }
            if (script.cachedOnly()) {
                reply.completeExceptionally(script.notCached(key, operation));
                return true;
            }
            // First use on this node: send the source, bounded anew.
            bound(key, operation,
                    send(open, CommandType.EVAL, output.get(), scriptArgs(script.sourceBytes(), keys, args)), open,
                    reply, again -> false);
            return true;
        });
        return reply;
    }

    /**
     * The open connection if there is one this very moment; {@code null} if connecting,
     * failed or a Cluster.
     */
    private Open openNow() {
        Attempt current = attempt;
        if (closed || current == null || !current.future().isDone() || current.future().isCompletedExceptionally()
                || current.client() instanceof RedisClusterClient) {
            return null;
        }
        try {
            // A connection factory that restarted has a new client: run() opens a
            // connection from it.
            return current.client() == clients.get() ? current.future().join() : null;
        }
        catch (RuntimeException ex) {
            return null;
        }
    }

    /**
     * Completes {@code reply} from {@code sent}, or with a timeout once the operation
     * timeout is over. The timer is the client's own (Netty's wheel, as Lettuce's command
     * timeouts use): no thread per command, and it fires within a tick (about 100 ms) of
     * the bound; the caller's own wait is bounded separately.
     * @param retried told of a failure first; {@code true} if it sent the command again
     * and took over {@code reply}
     */
    private <T> void bound(LockKey key, String operation, Sent<T> sent, Open open, CompletableFuture<Reply<T>> reply,
            Predicate<Throwable> retried) {
        AsyncCommand<byte[], byte[], T> command = sent.command();
        Timeout timeout = open.client().getResources().timer().newTimeout(expired -> {
            if (!command.isDone() && reply
                .completeExceptionally(LockCommandErrors.noAnswer(key, operation, bound(), new TimeoutException()))) {
                // Cancelled, it is not re-sent after a reconnect; if it already ran, the
                // caller undoes it.
                command.cancel(false);
            }
        }, timeoutNanos, TimeUnit.NANOSECONDS);
        command.whenComplete((value, failure) -> {
            timeout.cancel();
            if (failure == null) {
                reply.complete(new Reply<>(value, sent.sends().get() > 1));
                return;
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause()
                    : failure;
            if (retried.test(cause)) {
                return;
            }
            reply.completeExceptionally(LockCommandErrors.failed(key, operation, cause, credentials));
        });
    }

    /**
     * Sends every call before waiting for any, so they share the pipeline and, in a
     * Cluster, run on their nodes side by side, then hands each reply to {@code replies}
     * as it arrives, on the calling thread, until all are in or {@code deadline} passes:
     * a hung node costs the batch one operation timeout, not one per call, and does not
     * delay the others' replies.
     * @param replies told once per call, with its index and its reply ({@code null} where
     * that call failed or did not answer in time)
     */
    <T> void scripts(String operation, LuaScript script, Supplier<CommandOutput<byte[], byte[], T>> output,
            List<RenewalCall> calls, long deadline, BiConsumer<Integer, T> replies) {
        if (calls.isEmpty()) {
            return;
        }
        Open open;
        try {
            open = open(calls.get(0).key(), operation, deadline);
        }
        catch (LockBackendException ex) {
            renewalRefusals.failed(ex);
            for (int i = 0; i < calls.size(); i++) {
                replies.accept(i, null);
            }
            return;
        }
        BlockingQueue<Integer> completed = new LinkedBlockingQueue<>();
        List<AsyncCommand<byte[], byte[], T>> sent = new ArrayList<>(calls.size());
        for (int i = 0; i < calls.size(); i++) {
            RenewalCall call = calls.get(i);
            AsyncCommand<byte[], byte[], T> command = send(open, CommandType.EVALSHA, output.get(),
                    scriptArgs(script.sha1Bytes(), call.keys(), call.args()))
                .command();
            sent.add(command);
            int index = i;
            command.whenComplete((reply, failure) -> completed.add(index));
        }
        boolean[] answered = new boolean[calls.size()];
        int pending = calls.size();
        boolean interrupted = false;
        while (pending > 0) {
            long left = deadline - System.nanoTime();
            Integer index;
            try {
                index = left > 0 ? completed.poll(left, TimeUnit.NANOSECONDS) : null;
            }
            catch (InterruptedException ex) {
                interrupted = true;
                continue;
            }
            if (index == null) {
                break;
            }
            AsyncCommand<byte[], byte[], T> command = sent.get(index);
            T reply = null;
            try {
                reply = command.join();
            }
            catch (RuntimeException ex) {
                if (ex.getCause() instanceof RedisNoScriptException && script.cachedOnly()) {
                    // The node cannot vote: the batch's calls there fail, and whoever
                    // watches it hears of it.
                    script.notCached(calls.get(index).key(), operation);
                }
                else if (ex.getCause() instanceof RedisNoScriptException) {
                    // First use on this node: send the source, and count this call as
                    // pending again.
                    AsyncCommand<byte[], byte[], T> again = send(open, CommandType.EVAL, output.get(),
                            scriptArgs(script.sourceBytes(), calls.get(index).keys(), calls.get(index).args()))
                        .command();
                    sent.set(index, again);
                    again.whenComplete((r, f) -> completed.add(index));
                    continue;
                }
                else {
                    renewalRefusals.failed(ex);
                }
            }
            answered[index] = true;
            pending--;
            replies.accept(index, reply);
        }
        for (int i = 0; i < calls.size(); i++) {
            if (!answered[i]) {
                sent.get(i).cancel(false);
                replies.accept(i, null);
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static CommandArgs<byte[], byte[]> scriptArgs(byte[] scriptOrDigest, byte[][] keys, byte[][] args) {
        CommandArgs<byte[], byte[]> commandArgs = new CommandArgs<>(ByteArrayCodec.INSTANCE);
        // addKeys marks the first key, by which a Cluster connection routes the command.
        commandArgs.add(scriptOrDigest).add(keys.length).addKeys(keys).addValues(args);
        return commandArgs;
    }

    private record Sent<T>(AsyncCommand<byte[], byte[], T> command, AtomicInteger sends) {
    }

    private static <T> Sent<T> send(Open open, CommandType type, CommandOutput<byte[], byte[], T> output,
            CommandArgs<byte[], byte[]> args) {
        CountingSends<T> counting = new CountingSends<>(new Command<>(type, output, args));
        AsyncCommand<byte[], byte[], T> command = new AsyncCommand<>(counting);
        open.stateful().dispatch(command);
        return new Sent<>(command, counting.sends);
    }

    private <T> T await(LockKey key, String operation, AsyncCommand<byte[], byte[], T> command, long deadline) {
        try {
            return awaitUninterruptibly(command, deadline);
        }
        catch (TimeoutException ex) {
            // Cancelled, it is not re-sent after a reconnect; if it already ran, the
            // caller undoes it.
            command.cancel(false);
            throw LockCommandErrors.noAnswer(key, operation, bound(), ex);
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof RedisNoScriptException) {
                throw new NoScriptException();
            }
            throw LockCommandErrors.failed(key, operation, ex.getCause(), credentials);
        }
    }

    /**
     * Waits for {@code future} until {@code deadline}, through interrupts; the interrupt
     * flag is restored before returning.
     */
    static <T> T awaitUninterruptibly(CompletableFuture<T> future, long deadline)
            throws TimeoutException, ExecutionException {
        boolean interrupted = false;
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0 && !future.isDone()) {
                    throw new TimeoutException();
                }
                try {
                    return future.get(Math.max(left, 0), TimeUnit.NANOSECONDS);
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                }
            }
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Closes our connection; the client belongs to the connection factory. Called before
     * the factory stops ({@link LettuceLockBackend#stop()}): closed by the client's own
     * shutdown instead, a Cluster connection is closed twice over and Lettuce warns.
     * Skips a connection the client already closed, for the same reason.
     */
    @Override
    public void close() {
        Attempt current;
        synchronized (monitor) {
            closed = true;
            current = attempt;
            attempt = null;
        }
        if (current == null) {
            return;
        }
        StatefulConnection<byte[], byte[]> stateful;
        try {
            // A connect still under way is waited for (briefly): left running, it would
            // go on while
            // the client shuts down, and fail loudly.
            stateful = current.future().get(timeoutNanos, TimeUnit.NANOSECONDS).stateful();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return;
        }
        catch (ExecutionException | TimeoutException ex) {
            // Never connected, or still connecting: the connect closes what it opens, as
            // closed is set.
            return;
        }
        if (stateful instanceof RedisChannelHandler<?, ?> handler && handler.isClosed()) {
            return;
        }
        try {
            // Waited for, so a client shutdown right after cannot race it (and warn).
            stateful.closeAsync().get(timeoutNanos, TimeUnit.NANOSECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (ExecutionException | TimeoutException ex) {
            // Closing is best effort: the client's shutdown closes it at the latest.
        }
    }

    /**
     * Counts how often Lettuce writes the command to a socket: more than once means it
     * was re-sent after a reconnect. Lettuce encodes a command on every write, and never
     * re-sends one that was cancelled or completed.
     */
    private static final class CountingSends<T> extends CommandWrapper<byte[], byte[], T> {

        private final AtomicInteger sends = new AtomicInteger();

        CountingSends(Command<byte[], byte[], T> command) {
            super(command);
        }

        @Override
        public void encode(ByteBuf buf) {
            sends.incrementAndGet();
            super.encode(buf);
        }

    }

    /** Signals NOSCRIPT internally so the caller can fall back to EVAL. */
    static final class NoScriptException extends RuntimeException {

        NoScriptException() {
            super(null, null, false, false);
        }

    }

}
