package io.github.distlock.redis;

import java.lang.reflect.Method;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.DecoratedRedisConnection;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisConnectionUtils;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.util.ReflectionUtils;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.InspectableLockBackend.NodeReachability;
import io.github.distlock.core.LockKey;

/**
 * The lock protocol's I/O through Spring Data Redis's {@link StringRedisTemplate}, for
 * Jedis and any other connection factory: commands and scripts on the template's
 * connections (one code path for single nodes and Clusters), {@code EVALSHA} falling back
 * to {@code EVAL}.
 *
 * <p>
 * <b>Bounded and not interruptible.</b> Jedis calls block, for the client's own socket
 * timeout and, with a pool, for as long as the pool makes a borrower wait. So commands
 * run on a small executor of our own and the caller waits for each at most until its
 * deadline, through interrupts (the flag is restored afterwards): a command cut off
 * halfway would leave a key nobody knows about. A command still queued when its caller
 * gave up is never sent, and neither is one whose thread gets its connection too late,
 * nor the {@code EVAL} after a late {@code NOSCRIPT} ({@link LateScriptGuard}); one
 * already sent may still run, and then the caller undoes it. The undo goes out on another
 * pooled connection and could overtake it, so an undo ({@link Role#UNDO}) of a token
 * whose acquire timed out under way first waits, on the caller's thread and until its own
 * deadline, until that acquire has ended; if it has not, the undo fails as a timeout and
 * is retried later. The threads are shared: in a Cluster with a hung master, calls
 * blocked on it can hold all of them, and calls for healthy masters then time out too;
 * renewals have lanes of their own ({@link #renew}).
 *
 * <p>
 * <b>A lost reply is sent again, once.</b> A command whose connection broke while it
 * waited for the reply (the reply is lost; the command may have run) is sent once more on
 * another connection, within its deadline, and its reply says so
 * ({@link Reply#resent()}), as Lettuce's re-sends are. Jedis's Cluster client also
 * retries after a connection error, inside the client, where no re-send can be seen;
 * every lock command is idempotent for its token, so that is safe, but such a release
 * that finds the lock gone reports it not released.
 *
 * <p>
 * Renewals run in lanes: the calls of each Cluster master in a few threads of their own,
 * the masters side by side, each call reported as it answers. On a Jedis Cluster a
 * master's calls go to it as one pipeline ({@link JedisClusterRenewalPipeline}).
 */
final class SpringDataTransport implements RedisLockTransport, AutoCloseable {

    /**
     * Commands in flight at once. Matches the default size of Jedis's pool
     * ({@code spring.data.redis.jedis.pool.max-active}): more threads would only wait for
     * a connection.
     */
    private static final int THREADS = 8;

    /**
     * Threads that renew the leases of one master side by side: a master holds leases in
     * hundreds of slots, one script call each, and Jedis cannot pipeline them.
     */
    private static final int LANES_PER_MASTER = 4;

    /**
     * Reads of the first map of slots that a renewal round may start, one after another.
     */
    private static final int FIRST_TOPOLOGY_READS = 8;

    /** How often the renewals' map of slots to masters is read again. */
    private static final long TOPOLOGY_REFRESH_NANOS = TimeUnit.SECONDS.toNanos(10);

    /**
     * The bound of the command the current executor thread runs, for
     * {@link LateScriptGuard}.
     */
    private static final ThreadLocal<Long> DEADLINE = new ThreadLocal<>();

    private final StringRedisTemplate template;

    private final Duration operationTimeout;

    private final long timeoutNanos;

    private final String bound;

    private final ThreadPoolExecutor executor;

    /**
     * Acquires whose caller gave up while they were under way, by token, until they end:
     * an undo of that token must not reach Redis before them
     * ({@link #afterLateAcquires}).
     */
    private final Map<String, List<Command<?>>> lateAcquires = new ConcurrentHashMap<>();

    /** Says so when Redis answers a renewal with an error. */
    private final RenewalRefusalWarnings renewalRefusals = new RenewalRefusalWarnings(
            RedisErrorReply.SPRING_DATA_REDIS_CREDENTIALS);

    /**
     * Whether the connection goes to a Cluster, and its masters' slots; read on the first
     * renewal.
     */
    private volatile Topology topology;

    private final AtomicBoolean refreshingTopology = new AtomicBoolean();

    /** Renewal lanes, one thread per master at most (see {@link #renew}). */
    private final ExecutorService renewalLanes = Executors
        .newCachedThreadPool(daemonThreads("distributed-lock-renew-"));

    /** Each master's renewal lanes of the latest round. */
    private final Map<String, List<Lane>> lanesInFlight = new ConcurrentHashMap<>();

    private final AtomicInteger rounds = new AtomicInteger();

    /**
     * @throws IllegalStateException if replica acks are asked for on a Redis Cluster
     * connection factory
     */
    SpringDataTransport(RedisConnectionFactory connectionFactory, Duration operationTimeout, ReplicaAcks replicaAcks) {
        if (replicaAcks.enabled() && isClusterAware(connectionFactory)) {
            throw clusterRefused(replicaAcks);
        }
        this.template = new StringRedisTemplate(Objects.requireNonNull(connectionFactory, "connectionFactory"));
        this.operationTimeout = operationTimeout;
        this.timeoutNanos = operationTimeout.toNanos();
        this.bound = LockCommandErrors.bound(LockCommandErrors.OPERATION_TIMEOUT, operationTimeout);
        this.executor = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                daemonThreads("distributed-lock-redis-"));
        executor.allowCoreThreadTimeOut(true);
    }

    /**
     * Whether the factory connects to a Redis Cluster: both of Spring Data's factories
     * say so with {@code isRedisClusterAware()}, read reflectively so that neither driver
     * has to be present.
     */
    private static boolean isClusterAware(RedisConnectionFactory connectionFactory) {
        Method clusterAware = ReflectionUtils.findMethod(connectionFactory.getClass(), "isRedisClusterAware");
        return clusterAware != null
                && Boolean.TRUE.equals(ReflectionUtils.invokeMethod(clusterAware, connectionFactory));
    }

    /**
     * Jedis's Cluster connection borrows a pooled connection per command and sends
     * {@code WAIT} (which has no key) to any node, so the write and the {@code WAIT}
     * cannot be put on one connection to the lock's master through Spring Data's API.
     */
    private static IllegalStateException clusterRefused(ReplicaAcks replicaAcks) {
        return new IllegalStateException("distributed-lock.replica-acks=" + replicaAcks.replicas() + " is not "
                + "supported on a Redis Cluster through Spring Data Redis's template (Jedis): WAIT counts only the "
                + "writes of the connection it runs on, and the Cluster connection sends each command on a pooled "
                + "connection of its own and WAIT to an arbitrary node. Use Lettuce (the native backend confirms "
                + "on the lock master's connection), or set distributed-lock.replica-acks=0.");
    }

    private static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /**
     * Stops taking commands and waits up to the operation timeout for those under way;
     * the connections belong to the connection factory.
     */
    @Override
    public void close() {
        executor.shutdown();
        renewalLanes.shutdown();
        boolean interrupted = false;
        long deadline = System.nanoTime() + timeoutNanos;
        while (!executor.isTerminated() && System.nanoTime() < deadline) {
            try {
                executor.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            }
            catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public long deadline() {
        return System.nanoTime() + timeoutNanos;
    }

    // ------------------------------------------------------------------------------------------------
    // commands

    @Override
    public Reply<byte[]> setIfAbsentGet(LockKey key, String token, byte[] value, long ttlMillis, long deadline) {
        byte[] redisKey = RedisLockProtocol.bytes(key.storeKey());
        return call(key, "acquire", bound, deadline, token, () -> resendingLostReply(connection -> {
            LateScriptGuard.refuseIfLate();
            return connection.stringCommands()
                .setGet(redisKey, value, Expiration.milliseconds(ttlMillis), SetOption.ifAbsent());
        }));
    }

    /** Jedis blocks: never without a thread. */
    @Override
    public CompletableFuture<Reply<byte[]>> setIfAbsentGetAsync(LockKey key, byte[] value, long ttlMillis) {
        return null;
    }

    @Override
    public <T> Reply<T> script(LockKey key, String operation, LuaScript script, ReplyType type, byte[][] keys,
            byte[][] args, Role role, String token, long deadline) {
        if (role == Role.UNDO) {
            afterLateAcquires(key, token, operation, deadline);
        }
        ReturnType returnType = type == ReplyType.INTEGER ? ReturnType.INTEGER : ReturnType.MULTI;
        return call(key, operation, bound, deadline, role == Role.ACQUIRE ? token : null, () -> resendingLostReply(
                connection -> LateScriptGuard.eval(connection, key, operation, script, returnType, keys, args)));
    }

    /** Jedis blocks: never without a thread. */
    @Override
    public <T> CompletableFuture<Reply<T>> scriptAsync(LockKey key, String operation, LuaScript script, ReplyType type,
            byte[][] keys, byte[][] args) {
        return null;
    }

    /**
     * Runs {@code command} on a connection of the template, on this (executor) thread; if
     * that connection broke while it waited for the reply, once more on another: the
     * first delivery may have run, and the reply says it was re-sent. A timeout is not a
     * broken connection: the command may still be queued in Redis, and its caller undoes
     * it.
     */
    private <T> Reply<T> resendingLostReply(RedisCallback<T> command) {
        try {
            return new Reply<>(template.execute((RedisCallback<T>) connection -> {
                try {
                    return command.doInRedis(connection);
                }
                catch (RedisConnectionFailureException ex) {
                    throw isTimeout(ex) ? ex : new LostReply(ex);
                }
            }), false);
        }
        catch (LostReply lost) {
            return new Reply<>(template.execute(command), true);
        }
    }

    private static boolean isTimeout(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /** A connection broke while a command sent on it waited for its reply. */
    private static final class LostReply extends RuntimeException {

        LostReply(RedisConnectionFailureException cause) {
            super(cause.getMessage(), cause, false, false);
        }

    }

    @Override
    public Acknowledged renewAndWait(LockKey key, byte[][] keys, byte[][] args, ReplicaAcks acks, long deadline) {
        String confirmationBound = LockCommandErrors.confirmationBound(LockCommandErrors.OPERATION_TIMEOUT,
                operationTimeout, acks);
        return call(key, "replica acknowledgement", confirmationBound, deadline, null, () -> template
            .execute((RedisCallback<Acknowledged>) connection -> renewAndWait(connection, keys, args, acks)));
    }

    /**
     * {@code renew.lua} and then {@code WAIT}, both inside one callback, so on one
     * borrowed connection: Jedis never re-sends on another connection behind our back; a
     * broken one fails the call.
     */
    private static Acknowledged renewAndWait(RedisConnection connection, byte[][] keys, byte[][] args,
            ReplicaAcks acks) {
        LateScriptGuard.refuseIfLate();
        if (unwrap(connection) instanceof RedisClusterConnection) {
            throw clusterRefused(acks);
        }
        // EVAL, not EVALSHA: the script is small, and a NOSCRIPT answer would need a
        // second round trip.
        List<?> answers = connection.scriptingCommands()
            .eval(LockScripts.RENEW.sourceBytes(), ReturnType.MULTI, keys.length,
                    LateScriptGuard.keysAndArgs(keys, args));
        List<Object> renewed = new ArrayList<>(answers.size());
        boolean anyWritten = false;
        for (Object answer : answers) {
            long value = ((Number) answer).longValue();
            renewed.add(value);
            anyWritten |= value == 1L;
        }
        long replicas = 0;
        if (anyWritten) {
            replicas = ((Number) connection.execute("WAIT", acks.replicasArgument(), acks.timeoutArgument()))
                .longValue();
        }
        return new Acknowledged(renewed, replicas);
    }

    /**
     * Runs {@code command} on the executor and waits for it until {@code deadline},
     * whatever the calling thread's interrupt flag says (it is restored before
     * returning).
     * @param bound how the call is bounded, for the message of a timeout
     * @param acquiringToken the token {@code command} acquires with, or {@code null} if
     * it acquires nothing: an acquire that times out under way is listed, so its undo
     * waits for it
     * @throws LockBackendException if Redis fails the command or does not answer in time;
     * the command may have run all the same
     */
    private <T> T call(LockKey key, String operation, String bound, long deadline, String acquiringToken,
            Supplier<T> command) {
        Command<T> task = new Command<>(acquiringToken, () -> withDeadline(deadline, command));
        try {
            executor.execute(task);
        }
        catch (RejectedExecutionException ex) {
            throw new LockBackendException(key.name(), "The lock backend is closed: the " + operation + " of lock "
                    + key.printableName() + " was not sent to Redis", ex);
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return task.outcome.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                }
                catch (TimeoutException ex) {
                    // Still queued: it is never sent. Under way: it may still run, and
                    // the caller
                    // undoes it. Ended in this very moment: its outcome stands (next
                    // loop).
                    if (task.abandon()) {
                        throw LockCommandErrors.noAnswer(key, operation, bound, ex);
                    }
                }
                catch (ExecutionException ex) {
                    throw LockCommandErrors.failed(key, operation, ex.getCause(),
                            RedisErrorReply.SPRING_DATA_REDIS_CREDENTIALS);
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
     * One command on the executor. Its own state, because {@link FutureTask#cancel}
     * answers {@code true} for a task already under way too, which cannot tell "never
     * sent" from "may still run".
     */
    private final class Command<T> implements Runnable {

        private static final int QUEUED = 0;

        private static final int RUNNING = 1;

        private static final int ENDED = 2;

        private final String acquiringToken;

        private final Supplier<T> body;

        private final AtomicInteger state = new AtomicInteger(QUEUED);

        final CompletableFuture<T> outcome = new CompletableFuture<>();

        /** Counted down once the command has ended, sent or not. */
        final CountDownLatch ended = new CountDownLatch(1);

        /**
         * Set when the caller gave up while it ran; it is then in {@link #lateAcquires}
         * until it ends.
         */
        private volatile boolean late;

        Command(String acquiringToken, Supplier<T> body) {
            this.acquiringToken = acquiringToken;
            this.body = body;
        }

        @Override
        public void run() {
            if (!state.compareAndSet(QUEUED, RUNNING)) {
                return; // given up while queued: never sent
            }
            try {
                outcome.complete(body.get());
            }
            catch (Throwable ex) {
                outcome.completeExceptionally(ex);
            }
            finally {
                state.set(ENDED);
                ended.countDown();
                if (late) {
                    unlist();
                }
            }
        }

        /**
         * The caller gives up on the command.
         * @return {@code false} if it ended meanwhile: its outcome stands
         */
        boolean abandon() {
            if (state.compareAndSet(QUEUED, ENDED)) {
                ended.countDown();
                return true;
            }
            if (acquiringToken == null) {
                return state.get() != ENDED;
            }
            // Listed before the state is read again, and run() reads the flag after
            // setting the
            // state, so that whichever comes second unlists it.
            late = true;
            lateAcquires.compute(acquiringToken, (token, commands) -> {
                List<Command<?>> listed = commands != null ? commands : new CopyOnWriteArrayList<>();
                listed.add(this);
                return listed;
            });
            if (state.get() == ENDED) {
                unlist();
                return false;
            }
            return true;
        }

        private void unlist() {
            lateAcquires.computeIfPresent(acquiringToken, (token, commands) -> {
                commands.remove(this);
                return commands.isEmpty() ? null : commands;
            });
        }

    }

    /**
     * Waits, on the caller's thread and until {@code deadline}, for the acquires of
     * {@code token} that timed out while under way: an undo that reached Redis before one
     * of them would leave what it then ran (a lock, a place in the queue) to nobody.
     * Returns at once if there are none.
     * @throws LockBackendException if one is still under way at the deadline: nothing was
     * sent, and the caller retries later, as after any timeout
     */
    private void afterLateAcquires(LockKey key, String token, String operation, long deadline) {
        List<Command<?>> late = lateAcquires.get(token);
        if (late == null) {
            return;
        }
        boolean interrupted = false;
        try {
            for (Command<?> command : late) {
                while (true) {
                    try {
                        if (!command.ended.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                            throw new LockBackendException(key.name(),
                                    "The " + operation + " of lock " + key.printableName() + " ("
                                            + key.printableStoreKey() + ") was not sent: an "
                                            + "acquire of the same token that timed out is still under way on another "
                                            + "connection, must reach Redis first, and did not end within " + bound
                                            + ". Is Redis reachable?",
                                    new TimeoutException("an acquire of the same token is still under way"));
                        }
                        break;
                    }
                    catch (InterruptedException ex) {
                        interrupted = true; // an undo runs to completion whatever the
                                            // interrupt flag says
                    }
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
     * Runs {@code command} on this thread with {@code deadline} as the bound
     * {@link LateScriptGuard} checks.
     */
    private static <T> T withDeadline(long deadline, Supplier<T> command) {
        DEADLINE.set(deadline);
        try {
            return command.get();
        }
        finally {
            DEADLINE.remove();
        }
    }

    /**
     * Spring Data's script execution ({@code EVALSHA}, then {@code EVAL} on
     * {@code NOSCRIPT}), except that nothing is sent once the caller has given up:
     * neither a script whose thread only now got a connection (Jedis's pool makes
     * borrowers wait), nor the {@code EVAL} after a {@code NOSCRIPT} that came back late.
     * The caller is by then undoing the command; one that ran after the undo would leave
     * a key behind that nobody owns.
     */
    private static final class LateScriptGuard {

        private LateScriptGuard() {
        }

        @SuppressWarnings("unchecked")
        static <T> T eval(RedisConnection connection, LockKey key, String operation, LuaScript script,
                ReturnType returnType, byte[][] keys, byte[][] args) {
            refuseIfLate();
            byte[][] keysAndArgs = keysAndArgs(keys, args);
            try {
                return (T) connection.scriptingCommands().evalSha(script.sha1(), returnType, keys.length, keysAndArgs);
            }
            catch (RuntimeException ex) {
                if (!LockCommandErrors.says(ex, "NOSCRIPT")) {
                    throw ex;
                }
                if (script.cachedOnly()) {
                    throw script.notCached(key, operation);
                }
                refuseIfLate();
                return (T) connection.scriptingCommands()
                    .eval(script.sourceBytes(), returnType, keys.length, keysAndArgs);
            }
        }

        static byte[][] keysAndArgs(byte[][] keys, byte[][] args) {
            byte[][] keysAndArgs = new byte[keys.length + args.length][];
            System.arraycopy(keys, 0, keysAndArgs, 0, keys.length);
            System.arraycopy(args, 0, keysAndArgs, keys.length, args.length);
            return keysAndArgs;
        }

        static void refuseIfLate() {
            Long deadline = DEADLINE.get();
            if (deadline != null && System.nanoTime() - deadline > 0) {
                throw new QueryTimeoutException("Not sent: the lock command's operation timeout has passed");
            }
        }

    }

    // ------------------------------------------------------------------------------------------------
    // health

    /**
     * A {@code PING} through the template; on a Cluster, one to every master that serves
     * slots, side by side, each on its own thread.
     */
    @Override
    public List<NodeReachability> pingEachMaster(String name) {
        long start = System.nanoTime();
        long deadline = start + timeoutNanos;
        LockKey subject = new LockKey("health check", "");
        List<RedisClusterNode> masters;
        try {
            masters = call(subject, "health check", bound, deadline, null,
                    () -> template.execute((RedisCallback<List<RedisClusterNode>>) connection -> {
                        if (!(unwrap(connection) instanceof RedisClusterConnection cluster)) {
                            connection.ping();
                            return null;
                        }
                        List<RedisClusterNode> serving = new ArrayList<>();
                        for (RedisClusterNode node : cluster.clusterGetNodes()) {
                            // A master without slots serves no lock: an old master that a
                            // replica replaced, say.
                            if (node.isMaster() && node.getSlotRange() != null
                                    && node.getSlotRange().getSlotsArray().length > 0) {
                                serving.add(node);
                            }
                        }
                        return serving;
                    }));
        }
        catch (LockBackendException ex) {
            return List.of(new NodeReachability(name, false, Duration.ofNanos(System.nanoTime() - start),
                    inPlainWords(ex.getCause())));
        }
        if (masters == null) {
            return List.of(new NodeReachability(name, true, Duration.ofNanos(System.nanoTime() - start), null));
        }
        List<CompletableFuture<Long>> pings = new ArrayList<>(masters.size());
        for (RedisClusterNode master : masters) {
            try {
                pings.add(CompletableFuture.supplyAsync(() -> template.execute((RedisCallback<Long>) connection -> {
                    ((RedisClusterConnection) unwrap(connection)).ping(master);
                    return System.nanoTime();
                }), executor));
            }
            catch (RejectedExecutionException ex) {
                pings.add(CompletableFuture
                    .failedFuture(new IllegalStateException("not asked: the lock backend is closed")));
            }
        }
        List<NodeReachability> nodes = new ArrayList<>(masters.size());
        for (int i = 0; i < masters.size(); i++) {
            String address = masters.get(i).getHost() + ":" + masters.get(i).getPort();
            try {
                long answeredAt = LockConnection.awaitUninterruptibly(pings.get(i), deadline);
                nodes.add(new NodeReachability(address, true, Duration.ofNanos(answeredAt - start), null));
            }
            catch (TimeoutException | ExecutionException ex) {
                nodes.add(new NodeReachability(address, false, Duration.ofNanos(System.nanoTime() - start),
                        inPlainWords(ex instanceof ExecutionException ? ex.getCause() : ex)));
            }
        }
        return nodes;
    }

    private String inPlainWords(Throwable cause) {
        return LockCommandErrors.inPlainWords(cause, bound, RedisErrorReply.SPRING_DATA_REDIS_CREDENTIALS);
    }

    // ------------------------------------------------------------------------------------------------
    // renewal

    /**
     * The map of slots last read; the first round waits for it
     * ({@link #readFirstTopology}).
     */
    @Override
    public RenewalTopology renewalTopology(long deadline) {
        Topology known = topology;
        if (known == null) {
            known = readFirstTopology(deadline);
            if (known == null) {
                return null;
            }
            topology = known;
        }
        else if (known.isStale()) {
            refreshTopologyInBackground();
        }
        return known;
    }

    /**
     * Renews in lanes, a few per Cluster master (a few in all elsewhere): each lane runs
     * its share of the master's script calls one after another on a thread of its own,
     * and reports each as it answers. A master that stops answering holds up only its own
     * lanes; while one of them is still blocked (Jedis waits for its socket timeout), the
     * next rounds report that master's calls as unanswered at once instead of sending
     * more to it, so blocked threads stay a few per master. On a Jedis Cluster without
     * replica acknowledgements, a master's calls go to it as one pipeline, in a single
     * lane ({@link #renewPipelined}): hundreds of round trips one after another do not
     * fit in a round on a loaded machine.
     */
    @Override
    public void renew(LuaScript script, Map<String, List<RenewalCall>> callsByMaster, ReplicaAcks acks, long deadline,
            RenewalReplies replies) {
        List<RenewalCall> calls = new ArrayList<>();
        int round = rounds.getAndIncrement() * 7919;
        // With replica acknowledgements each renewal call is followed by WAIT on its own
        // connection
        // (renewAndWait), which the pipeline does not do: those go call by call.
        Topology known = topology;
        boolean pipelined = known != null && known.pipelined() && !acks.enabled();
        BlockingQueue<Answer> answers = new LinkedBlockingQueue<>();
        List<Integer> stuck = new ArrayList<>();
        for (Map.Entry<String, List<RenewalCall>> node : callsByMaster.entrySet()) {
            List<Integer> indexes = new ArrayList<>(node.getValue().size());
            for (RenewalCall call : node.getValue()) {
                indexes.add(calls.size());
                calls.add(call);
            }
            List<Lane> previous = lanesInFlight.get(node.getKey());
            if (previous != null && previous.stream().anyMatch(lane -> lane.isStuck(timeoutNanos))) {
                // That master has not answered a renewal of an earlier round: do not pile
                // more onto it.
                stuck.addAll(indexes);
                continue;
            }
            // Each round starts elsewhere in the list, so that the calls a round runs out
            // of time for
            // are not the same ones every round.
            Collections.rotate(indexes, round);
            List<Lane> started = new ArrayList<>(LANES_PER_MASTER);
            if (pipelined) {
                Lane lane = new Lane();
                lane.task = new FutureTask<>(() -> {
                    renewPipelined(node.getKey(), script, calls, indexes, deadline, lane, answers);
                    return null;
                });
                started.add(lane);
            }
            for (int l = 0; l < LANES_PER_MASTER && l < indexes.size() && !pipelined; l++) {
                List<Integer> share = new ArrayList<>();
                for (int i = l; i < indexes.size(); i += LANES_PER_MASTER) {
                    share.add(indexes.get(i));
                }
                Lane lane = new Lane();
                lane.task = new FutureTask<>(() -> {
                    for (int c : share) {
                        if (System.nanoTime() - deadline > 0) {
                            return null;
                        }
                        lane.callStartedAt = System.nanoTime();
                        try {
                            answers.add(renewOne(script, c, calls.get(c), acks, deadline));
                        }
                        finally {
                            lane.callStartedAt = 0;
                        }
                    }
                    return null;
                });
                started.add(lane);
            }
            for (Lane lane : started) {
                try {
                    renewalLanes.execute(lane.task);
                }
                catch (RejectedExecutionException ex) {
                    // Closed: the calls are reported unanswered below.
                }
            }
            lanesInFlight.put(node.getKey(), started);
        }
        boolean[] reported = new boolean[calls.size()];
        int pending = calls.size();
        for (int c : stuck) {
            reported[c] = true;
            pending--;
            replies.answered(calls.get(c), null, -1);
        }
        boolean interrupted = false;
        while (pending > 0) {
            Answer answer;
            try {
                long left = deadline - System.nanoTime();
                answer = left > 0 ? answers.poll(left, TimeUnit.NANOSECONDS) : answers.poll();
            }
            catch (InterruptedException ex) {
                interrupted = true;
                continue;
            }
            if (answer == null) {
                break;
            }
            reported[answer.call()] = true;
            pending--;
            replies.answered(calls.get(answer.call()), answer.result(), answer.replicas());
        }
        for (int c = 0; c < calls.size(); c++) {
            if (!reported[c]) {
                // Not sent: never will be (the lane checks the deadline). Sent: a late
                // renewal only
                // extends our own lease, which is then reported lost or renewed by the
                // next round.
                replies.answered(calls.get(c), null, -1);
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A master's renewal calls of one round on a Jedis Cluster, on a lane's thread: all
     * of them in one pipeline to that master ({@link JedisClusterRenewalPipeline}),
     * reported together when it answers; then, one by one through the cluster client,
     * those the master refused (a slot that moved or is migrating: the client follows
     * {@code MOVED} and {@code ASK}). If the pipeline's connection fails, the master's
     * calls are reported unanswered at once.
     */
    private void renewPipelined(String node, LuaScript script, List<RenewalCall> calls, List<Integer> indexes,
            long deadline, Lane lane, BlockingQueue<Answer> answers) {
        // Checked before sending only: a pipeline sent late (the pool made the lane wait)
        // extends
        // nothing but leases that still hold our tokens, which the next round counts in
        // any case.
        if (System.nanoTime() - deadline > 0) {
            return;
        }
        List<RenewalCall> sent = new ArrayList<>(indexes.size());
        for (int c : indexes) {
            sent.add(calls.get(c));
        }
        List<List<Object>> replies;
        lane.callStartedAt = System.nanoTime();
        try {
            replies = template.execute((RedisCallback<List<List<Object>>>) connection -> JedisClusterRenewalPipeline
                .send(connection, node, script, sent), true);
        }
        catch (RuntimeException ex) {
            renewalRefusals.failed(ex);
            for (int c : indexes) {
                answers.add(new Answer(c, null, -1));
            }
            return;
        }
        finally {
            lane.callStartedAt = 0;
        }
        List<Integer> refused = new ArrayList<>();
        for (int i = 0; i < indexes.size(); i++) {
            List<Object> reply = replies == null ? null : replies.get(i);
            if (reply == null) {
                refused.add(indexes.get(i));
            }
            else {
                answers.add(new Answer(indexes.get(i), reply, -1));
            }
        }
        if (!refused.isEmpty()) {
            // Our map of slots is out of date, or a slot is on the move: read it again.
            refreshTopologyInBackground();
        }
        for (int c : refused) {
            if (System.nanoTime() - deadline > 0) {
                return;
            }
            lane.callStartedAt = System.nanoTime();
            try {
                answers.add(renewOne(script, c, calls.get(c), ReplicaAcks.NONE, deadline));
            }
            finally {
                lane.callStartedAt = 0;
            }
        }
    }

    /**
     * One renewal script call, on a lane's thread, followed by {@code WAIT} with
     * {@code acks} enabled.
     */
    private Answer renewOne(LuaScript script, int index, RenewalCall call, ReplicaAcks acks, long deadline) {
        try {
            if (acks.enabled()) {
                Acknowledged acknowledged = withDeadline(deadline,
                        () -> template.execute((RedisCallback<Acknowledged>) connection -> renewAndWait(connection,
                                call.keys(), call.args(), acks)));
                return new Answer(index, acknowledged.renewed(), acknowledged.replicas());
            }
            List<Object> answers = withDeadline(deadline, () -> RedisLockProtocol.retryingClusterRefusals(deadline,
                    () -> template.execute((RedisCallback<List<Object>>) connection -> LateScriptGuard.eval(connection,
                            call.key(), "renewal", script, ReturnType.MULTI, call.keys(), call.args()))));
            return new Answer(index, answers, -1);
        }
        catch (RuntimeException ex) {
            renewalRefusals.failed(ex);
            return new Answer(index, null, -1);
        }
    }

    /**
     * The first map of slots, which the first renewals wait for. Spring Data reads it
     * from a node picked at random (Jedis's topology provider shuffles them), and a hung
     * master answers only after the client's socket timeout: so a read that has not
     * answered within an eighth of the operation timeout is left running and another
     * starts, on the renewal threads, until one answers or the round's deadline passes.
     * At most {@link #FIRST_TOPOLOGY_READS} reads.
     * @return the map, or {@code null} if no read answered in time
     */
    private Topology readFirstTopology(long deadline) {
        CompletableFuture<Topology> firstAnswer = new CompletableFuture<>();
        long staggerNanos = Math.max(timeoutNanos / FIRST_TOPOLOGY_READS, TimeUnit.MILLISECONDS.toNanos(1));
        boolean interrupted = false;
        try {
            for (int read = 0; read < FIRST_TOPOLOGY_READS && !firstAnswer.isDone(); read++) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    renewalLanes.execute(() -> {
                        try {
                            firstAnswer.complete(template.execute(Topology::read, true));
                        }
                        catch (RuntimeException ex) {
                            // The next read, if there is time for one, asks another node.
                        }
                    });
                }
                catch (RejectedExecutionException ex) {
                    return null; // closed
                }
                try {
                    return firstAnswer.get(Math.min(staggerNanos, left), TimeUnit.NANOSECONDS);
                }
                catch (TimeoutException ex) {
                    // Not yet: start another read.
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                }
                catch (ExecutionException ex) {
                    return null; // not thrown: the reads never complete it exceptionally
                }
            }
            long left = deadline - System.nanoTime();
            try {
                return left > 0 ? firstAnswer.get(left, TimeUnit.NANOSECONDS) : firstAnswer.getNow(null);
            }
            catch (TimeoutException | ExecutionException ex) {
                return null;
            }
            catch (InterruptedException ex) {
                interrupted = true;
                return firstAnswer.getNow(null);
            }
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void refreshTopologyInBackground() {
        if (refreshingTopology.compareAndSet(false, true)) {
            try {
                renewalLanes.execute(() -> {
                    try {
                        topology = template.execute(Topology::read, true);
                    }
                    catch (RuntimeException ex) {
                        // The old map stays; it only groups renewals, it never routes a
                        // command.
                    }
                    finally {
                        refreshingTopology.set(false);
                    }
                });
            }
            catch (RejectedExecutionException ex) {
                refreshingTopology.set(false);
            }
        }
    }

    /**
     * A renewal call's answer, from a lane: the call's index in the round, and what it
     * answered.
     */
    private record Answer(int call, List<Object> result, long replicas) {
    }

    /** One thread's share of a master's renewal calls in one round. */
    private static final class Lane {

        volatile FutureTask<Void> task;

        /**
         * When the call under way was sent, in {@link System#nanoTime()}; 0 between
         * calls.
         */
        volatile long callStartedAt;

        /** Whether a call has been waiting for its master longer than {@code nanos}. */
        boolean isStuck(long nanos) {
            long started = callStartedAt;
            return task != null && !task.isDone() && started != 0 && System.nanoTime() - started > nanos;
        }

    }

    /**
     * Which master serves each slot, as last read: to put each master's renewals in a
     * lane of their own. Commands are routed by the client, except a Jedis renewal
     * pipeline, which goes to the master this map names; a master refuses ({@code MOVED})
     * what is no longer its own, and that is sent again through the client. So a stale
     * map costs at most some isolation and some round trips until the next refresh.
     *
     * @param cluster whether the connection goes to a Redis Cluster
     * @param masters the master of each slot ({@code null} where unknown); empty if not a
     * Cluster
     * @param readAt when it was read, in {@link System#nanoTime()}
     * @param pipelined whether a master's renewals go to it as one Jedis pipeline
     * ({@link JedisClusterRenewalPipeline}) rather than one script call after another
     */
    private record Topology(boolean cluster, String[] masters, long readAt,
            boolean pipelined) implements RenewalTopology {

        static Topology read(RedisConnection connection) {
            RedisConnection raw = unwrap(connection);
            if (!(raw instanceof RedisClusterConnection clusterConnection)) {
                return new Topology(false, new String[0], System.nanoTime(), false);
            }
            // By name first: JedisClusterRenewalPipeline refers to Jedis, which may not
            // be there.
            boolean pipelined = raw.getClass().getName().equals(JedisClusterRenewalPipeline.JEDIS_CLUSTER_CONNECTION)
                    && JedisClusterRenewalPipeline.canPipeline(raw);
            String[] masters = new String[ClusterSlotHashUtil.SLOT_COUNT];
            for (RedisClusterNode node : clusterConnection.clusterGetNodes()) {
                if (node.isMaster() && node.getSlotRange() != null) {
                    for (int slot : node.getSlotRange().getSlotsArray()) {
                        masters[slot] = node.asString();
                    }
                }
            }
            return new Topology(true, masters, System.nanoTime(), pipelined);
        }

        boolean isStale() {
            return cluster && System.nanoTime() - readAt > TOPOLOGY_REFRESH_NANOS;
        }

        @Override
        public String masterOf(LockKey key) {
            if (!cluster) {
                return "";
            }
            String master = masters[ClusterSlotHashUtil.calculateSlot(key.storeKey())];
            return master != null ? master : "?";
        }
    }

    /**
     * The connection a template callback runs on, without Spring Data's wrappers around
     * it: the string-converting decorator of a {@code StringRedisTemplate}, and a
     * transaction-bound connection's proxy. The Jedis Cluster pipeline needs the real
     * connection to find its client's node pools. The callbacks that need it are run with
     * {@code exposeConnection} set: otherwise the template hands them a close-suppressing
     * proxy with no way to the connection inside (Spring Data Redis 4 does so on a
     * Cluster, and the pipeline was then never used).
     */
    static RedisConnection unwrap(RedisConnection connection) {
        RedisConnection current = connection;
        while (true) {
            if (current instanceof DecoratedRedisConnection decorated) {
                current = decorated.getDelegate();
            }
            else if (current instanceof RedisConnectionUtils.RedisConnectionProxy proxy) {
                current = proxy.getTargetConnection();
            }
            else {
                return current;
            }
        }
    }

}
