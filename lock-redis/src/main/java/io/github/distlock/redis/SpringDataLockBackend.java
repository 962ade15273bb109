package io.github.distlock.redis;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
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
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import org.springframework.dao.QueryTimeoutException;
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
import org.springframework.data.redis.core.script.DefaultScriptExecutor;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.data.redis.serializer.RedisSerializer;
import org.springframework.util.ReflectionUtils;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.QueueingLockBackend;

/**
 * Locks in one Redis deployment (standalone, Sentinel or Cluster) reached through any Spring Data
 * Redis {@link RedisConnectionFactory}, Jedis in particular: every command goes through
 * {@link StringRedisTemplate}, scripts through {@code execute(RedisScript, keys, args)} (which
 * sends {@code EVALSHA} and falls back to {@code EVAL}), so one code path serves single nodes and
 * Clusters alike. The scripts, keys and wire format are exactly those of {@link RedisLockBackend}
 * (the same {@code *.lua} files, by {@link LockScripts}), so instances on either backend share
 * locks, queues, fencing counters and the release channel.
 *
 * <p>A free lock is taken with a bare {@code SET NX PX GET} ({@code setGet}); on Redis 6.2, which
 * refuses {@code NX} with {@code GET}, {@code acquire.lua} does it instead. {@code GET} makes the
 * command safe to run twice: see below.
 *
 * <p><b>Bounded and not interruptible.</b> Jedis calls block, for the client's own socket timeout
 * and, with a pool, for as long as the pool makes a borrower wait. So commands run on a small
 * executor of our own and the caller waits for each at most the operation timeout, through
 * interrupts (the flag is restored afterwards): a command cut off halfway would leave a key nobody
 * knows about. A command still queued when its caller gave up is cancelled and never sent, and so
 * is one whose thread gets its connection too late; one already sent may still run, and then the
 * caller undoes it, as {@link LockBackend} prescribes. The undo goes out on another pooled
 * connection and could overtake it, so an undo ({@link #release}, {@link #stopWaiting}) of a token
 * whose acquire timed out under way first waits, on the caller's thread and within its own
 * operation timeout, until that acquire has ended; if it has not, the undo fails as a timeout and
 * is retried later. Other releases never wait. The threads are shared: in a Cluster with a
 * hung master, calls blocked on it (for the client's socket timeout) can hold all of them, and
 * calls for healthy masters then time out too; renewals have lanes of their own ({@link #renew}).
 *
 * <p><b>Sent at most once, mostly.</b> A Jedis connection never re-sends a command after a
 * reconnect (Lettuce does, which is why {@link RedisLockBackend} counts deliveries). Jedis's
 * Cluster client does retry a command after a connection error, up to
 * {@code spring.data.redis.cluster.max-redirects} times, and the first delivery may have run:
 * every command here is idempotent for its token, so that is safe. The one visible difference: a
 * release retried after its first delivery released the lock answers "not ours", which here is
 * reported as not released (Lettuce's backend can tell it was re-sent and counts it as released).
 *
 * <p>Renewals are grouped like the Lettuce backend's (one script call per slot in a Cluster, up to
 * 1,000 keys each); the calls of each Cluster master run in a lane of their own, the lanes side by
 * side, and each outcome is reported as its call answers ({@link #renew}). On a Jedis Cluster a
 * master's calls go to it as one pipeline ({@link JedisClusterRenewalPipeline}).
 */
public final class SpringDataLockBackend
        implements QueueingLockBackend, FencingLockBackend, InspectableLockBackend, AutoCloseable {

    /**
     * Commands in flight at once. Matches the default size of Jedis's pool
     * ({@code spring.data.redis.jedis.pool.max-active}): more threads would only wait for a connection.
     */
    private static final int THREADS = 8;

    private static final RedisScript<List<Object>> ACQUIRE = array(LockScripts.ACQUIRE);
    private static final RedisScript<Long> RELEASE = LockScripts.RELEASE.asRedisScript(Long.class);
    private static final RedisScript<List<Object>> RENEW = array(LockScripts.RENEW);
    private static final RedisScript<List<Object>> CANCEL = array(LockScripts.CANCEL);
    private static final RedisScript<Long> FENCE = LockScripts.FENCE.asRedisScript(Long.class);
    private static final RedisScript<List<Object>> INSPECT = array(LockScripts.INSPECT);
    private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long MAX_RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /**
     * Threads that renew the leases of one master side by side: a master holds leases in hundreds of
     * slots, one script call each, and Jedis cannot pipeline them.
     */
    private static final int LANES_PER_MASTER = 4;
    /** Reads of the first map of slots that a renewal round may start, one after another (see {@link #readFirstTopology}). */
    private static final int FIRST_TOPOLOGY_READS = 8;
    /** How often the renewals' map of slots to masters is read again. */
    private static final long TOPOLOGY_REFRESH_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** The bound of the command the current executor thread runs, for {@link LateScriptGuard}. */
    private static final ThreadLocal<Long> DEADLINE = new ThreadLocal<>();

    private final StringRedisTemplate template;
    /** How many replicas confirm each lock write ({@link #confirm}); none by default. */
    private final ReplicaAcks replicaAcks;
    private final Duration operationTimeout;
    private final long timeoutNanos;
    private final String keyPrefix;
    private final String releaseChannel;
    /** What the health check calls the node or Sentinel master; a Cluster's masters are named by address. */
    private final String name;
    private final ThreadPoolExecutor executor;
    /**
     * Acquires whose caller gave up while they were under way, by token, until they end: an undo of
     * that token must not reach Redis before them ({@link #afterLateAcquires}).
     */
    private final Map<String, List<Command<?>>> lateAcquires = new ConcurrentHashMap<>();
    /** Says so when Redis answers a renewal with an error. */
    private final RenewalRefusalWarnings renewalRefusals =
            new RenewalRefusalWarnings(RedisErrorReply.SPRING_DATA_REDIS_CREDENTIALS);
    /** Set once a server refuses {@code SET NX GET} (Redis before 7.0): scripts take over. */
    private volatile boolean setNxGetRefused;
    /** Whether the connection goes to a Cluster, and its masters' slots; read on the first renewal. */
    private volatile Topology topology;
    private final AtomicBoolean refreshingTopology = new AtomicBoolean();
    /** Renewal lanes, one thread per master at most (see {@link #renew}). */
    private final ExecutorService renewalLanes = Executors.newCachedThreadPool(daemonThreads("distributed-lock-renew-"));
    /** Each master's renewal lanes of the latest round. */
    private final Map<String, List<Lane>> lanesInFlight = new ConcurrentHashMap<>();
    private final AtomicInteger rounds = new AtomicInteger();

    /**
     * @param connectionFactory Spring Data Redis's connection factory, with any driver
     * @param operationTimeout upper bound on each lock command
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param releaseChannel where a release announces that it handed the lock to a waiter
     *        ({@link RedisReleaseSubscriber#releaseChannel(String)})
     */
    public SpringDataLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout, String keyPrefix,
            String releaseChannel) {
        this(connectionFactory, operationTimeout, keyPrefix, releaseChannel, ReplicaAcks.NONE);
    }

    /**
     * @param connectionFactory Spring Data Redis's connection factory, with any driver
     * @param operationTimeout upper bound on each lock command
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param releaseChannel where a release announces that it handed the lock to a waiter
     *        ({@link RedisReleaseSubscriber#releaseChannel(String)})
     * @param replicaAcks how many replicas must confirm each lock write ({@link #confirm})
     * @throws IllegalStateException if replica acks are asked for on a Redis Cluster connection factory
     */
    public SpringDataLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout, String keyPrefix,
            String releaseChannel, ReplicaAcks replicaAcks) {
        if (replicaAcks.enabled() && isClusterAware(connectionFactory)) {
            throw clusterRefused(replicaAcks);
        }
        this.replicaAcks = replicaAcks;
        this.template = new StringRedisTemplate(Objects.requireNonNull(connectionFactory, "connectionFactory"));
        template.setScriptExecutor(new LateScriptGuard(template));
        this.operationTimeout = operationTimeout;
        this.timeoutNanos = operationTimeout.toNanos();
        this.keyPrefix = keyPrefix;
        this.releaseChannel = releaseChannel;
        this.name = DeploymentName.of(connectionFactory);
        this.executor = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                daemonThreads("distributed-lock-redis-"));
        executor.allowCoreThreadTimeOut(true);
    }

    /**
     * Whether the factory connects to a Redis Cluster: both of Spring Data's factories say so with
     * {@code isRedisClusterAware()}, read reflectively so that neither driver has to be present.
     */
    private static boolean isClusterAware(RedisConnectionFactory connectionFactory) {
        Method clusterAware = ReflectionUtils.findMethod(connectionFactory.getClass(), "isRedisClusterAware");
        return clusterAware != null && Boolean.TRUE.equals(ReflectionUtils.invokeMethod(clusterAware, connectionFactory));
    }

    /**
     * Jedis's Cluster connection borrows a pooled connection per command and sends {@code WAIT} (which has
     * no key) to any node, so the write and the {@code WAIT} cannot be put on one connection to the lock's
     * master through Spring Data's API.
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

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private static RedisScript<List<Object>> array(LuaScript script) {
        return (RedisScript) script.asRedisScript(List.class);
    }

    /**
     * Stops taking commands and waits up to the operation timeout for those under way; the
     * connections belong to the connection factory.
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
        if (!replicaAcks.enabled() || !attempt.acquired()) {
            return attempt;
        }
        return confirm(key, token, ttlMillis) ? attempt : AcquireResult.notAcquired(0, 0);
    }

    @Override
    public AcquireResult confirmHandOver(LockKey key, String token, long ttlMillis, long fencingToken) {
        if (!replicaAcks.enabled()) {
            return QueueingLockBackend.super.confirmHandOver(key, token, ttlMillis, fencingToken);
        }
        return confirm(key, token, ttlMillis) ? AcquireResult.acquired(fencingToken, ttlMillis)
                : AcquireResult.notAcquired(0, 0);
    }

    /**
     * Writes the lock again ({@code renew.lua}: compare-and-{@code PEXPIRE}, which follows the lock's own
     * write or hand-over in the replication stream) and sends {@code WAIT}, both inside one callback, so on
     * one borrowed connection: {@code WAIT} counts only that connection's writes. Jedis never re-sends on
     * another connection behind our back; a broken one fails the call.
     *
     * @return {@code true} if the lock holds {@code token} and enough replicas have it; {@code false} if it
     *         no longer holds {@code token}
     * @throws io.github.distlock.ReplicaAcknowledgementException if too few replicas confirmed it in time
     */
    private boolean confirm(LockKey key, String token, long ttlMillis) {
        long deadline = deadline() + replicaAcks.timeout().toNanos();
        long[] renewedAndAcks = call(key, "replica acknowledgement", deadline, null, () -> template.execute(
                (RedisCallback<long[]>) connection -> renewAndWait(connection, List.of(key.storeKey()),
                        List.of(token, Long.toString(ttlMillis)))));
        if (renewedAndAcks[0] != 1L) {
            return false;
        }
        replicaAcks.require(key, renewedAndAcks[1]);
        return true;
    }

    /**
     * Runs {@code renew.lua} on {@code keys} and then {@code WAIT}, on this one connection.
     *
     * @return the script's answer for each key (1 renewed, 0 not ours), then the replicas that acknowledged
     */
    private long[] renewAndWait(RedisConnection connection, List<String> keys, List<String> args) {
        LateScriptGuard.refuseIfLate();
        if (connection instanceof RedisClusterConnection
                || (connection instanceof DecoratedRedisConnection decorated
                        && decorated.getDelegate() instanceof RedisClusterConnection)) {
            throw clusterRefused(replicaAcks);
        }
        byte[][] keysAndArgs = new byte[keys.size() + args.size()][];
        for (int i = 0; i < keys.size(); i++) {
            keysAndArgs[i] = bytes(keys.get(i));
        }
        for (int i = 0; i < args.size(); i++) {
            keysAndArgs[keys.size() + i] = bytes(args.get(i));
        }
        // EVAL, not EVALSHA: the script is small, and a NOSCRIPT answer would need a second round trip.
        List<?> renewed = connection.scriptingCommands().eval(LockScripts.RENEW.sourceBytes(), ReturnType.MULTI,
                keys.size(), keysAndArgs);
        long[] result = new long[keys.size() + 1];
        boolean anyWritten = false;
        for (int i = 0; i < keys.size(); i++) {
            result[i] = ((Number) renewed.get(i)).longValue();
            anyWritten |= result[i] == 1L;
        }
        if (anyWritten) {
            Object acks = connection.execute("WAIT", replicaAcks.replicasArgument(), replicaAcks.timeoutArgument());
            result[keys.size()] = ((Number) acks).longValue();
        }
        return result;
    }

    /**
     * A bare {@code SET NX PX GET}: no script runs on the server. Answered with our own token, it was
     * retried after its first delivery took the lock: ours all the same, the lease counted from
     * before the first delivery.
     */
    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
        if (!setNxGetRefused) {
            byte[] redisKey = bytes(key.storeKey());
            byte[] value = bytes(token);
            try {
                byte[] previous = call(key, "acquire", deadline(), token, () -> template.execute(
                        (RedisCallback<byte[]>) connection -> {
                            LateScriptGuard.refuseIfLate();
                            return connection.stringCommands().setGet(redisKey, value,
                                    Expiration.milliseconds(ttlMillis), SetOption.ifAbsent());
                        }));
                return confirmed(key, token, ttlMillis,
                        previous == null || token.equals(new String(previous, StandardCharsets.UTF_8))
                                ? AcquireResult.acquired(0, ttlMillis) : AcquireResult.notAcquired(0, 0));
            }
            catch (LockBackendException ex) {
                if (!hasMessage(ex, "syntax error")) {
                    throw ex;
                }
                // Redis 6.2: NX and GET together are a syntax error, so nothing ran.
                setNxGetRefused = true;
            }
        }
        return confirmed(key, token, ttlMillis, acquireScript(key, token, ttlMillis, 0, false, false));
    }

    private AcquireResult acquireScript(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        List<Object> reply = script(key, "acquire", deadline(), token, ACQUIRE, token, Long.toString(ttlMillis),
                Long.toString(LockScripts.counterLifetime(ttlMillis)), Long.toString(queueMillis), queued ? "1" : "0",
                fencingToken ? "1" : "0");
        if ((Long) reply.get(0) == 1L) {
            return AcquireResult.acquired((Long) reply.get(1), (Long) reply.get(2));
        }
        return AcquireResult.notAcquired((Long) reply.get(1), (Long) reply.get(2));
    }

    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        return script(key, "fencing token", deadline(), null, FENCE, token,
                Long.toString(LockScripts.counterLifetime(ttlMillis)));
    }

    @Override
    public boolean release(LockKey key, String token) {
        long deadline = deadline();
        afterLateAcquires(key, token, "release", deadline);
        return script(key, "release", deadline, null, RELEASE, token, releaseChannel,
                Long.toString(LockScripts.FENCE_COUNTER_TTL_MILLIS)) == 1L;
    }

    @Override
    public AcquireResult stopWaiting(LockKey key, String token, long ttlMillis) {
        long deadline = deadline();
        afterLateAcquires(key, token, "cancel", deadline);
        List<Object> reply = script(key, "cancel", deadline, null, CANCEL, token,
                Long.toString(LockScripts.counterLifetime(ttlMillis)));
        if ((Long) reply.get(0) == 1L) {
            return AcquireResult.acquired((Long) reply.get(1), (Long) reply.get(2));
        }
        return AcquireResult.notAcquired(0, 0);
    }

    /**
     * Runs one of the per-key scripts; they all take the lock's four keys.
     *
     * @param acquiringToken the token the script acquires with, or {@code null} if it acquires nothing
     */
    private <T> T script(LockKey key, String operation, long deadline, String acquiringToken, RedisScript<T> script,
            Object... args) {
        List<String> keys = LockScripts.keys(key);
        return call(key, operation, deadline, acquiringToken, () -> template.execute(script, keys, args));
    }

    /**
     * Waits, on the caller's thread and until {@code deadline}, for the acquires of {@code token}
     * that timed out while under way: an undo that reached Redis before one of them would leave
     * what it then ran (a lock, a place in the queue) to nobody. Returns at once if there are none.
     *
     * @throws LockBackendException if one is still under way at the deadline: nothing was sent, and
     *         the caller retries later, as after any timeout
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
                            throw new LockBackendException(key.name(), "The " + operation + " of lock "
                                    + key.printableName() + " (" + key.printableStoreKey() + ") was not sent: an "
                                    + "acquire of the same token that timed out is still under way on another "
                                    + "connection, must reach Redis first, and did not end within "
                                    + "distributed-lock.operation-timeout=" + operationTimeout
                                    + ". Is Redis reachable?",
                                    new TimeoutException("an acquire of the same token is still under way"));
                        }
                        break;
                    }
                    catch (InterruptedException ex) {
                        interrupted = true; // an undo runs to completion whatever the interrupt flag says
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

    /** One script ({@code inspect.lua}) reads the PTTL, queue and counter: it never reads the token. */
    @Override
    public LockState inspect(LockKey key) {
        List<Object> reply = script(key, "inspection", deadline(), null, INSPECT);
        return LockScripts.lockState(reply);
    }

    /**
     * A {@code PING} through the template; on a Cluster, one to every master that serves slots, side
     * by side, each on its own thread. Every master holds a share of the locks, so all of them must answer.
     */
    @Override
    public Reachability ping() {
        long start = System.nanoTime();
        long deadline = start + timeoutNanos;
        LockKey subject = new LockKey("health check", "");
        List<RedisClusterNode> masters;
        try {
            masters = call(subject, "health check", deadline, null, () -> template.execute(
                    (RedisCallback<List<RedisClusterNode>>) connection -> {
                        if (!(unwrap(connection) instanceof RedisClusterConnection cluster)) {
                            connection.ping();
                            return null;
                        }
                        List<RedisClusterNode> serving = new ArrayList<>();
                        for (RedisClusterNode node : cluster.clusterGetNodes()) {
                            // A master without slots serves no lock: an old master that a replica replaced, say.
                            if (node.isMaster() && node.getSlotRange() != null
                                    && node.getSlotRange().getSlotsArray().length > 0) {
                                serving.add(node);
                            }
                        }
                        return serving;
                    }));
        }
        catch (LockBackendException ex) {
            return Reachability.single(new NodeReachability(name, false, Duration.ofNanos(System.nanoTime() - start),
                    inPlainWords(ex.getCause())));
        }
        if (masters == null) {
            return Reachability.single(new NodeReachability(name, true, Duration.ofNanos(System.nanoTime() - start),
                    null));
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
                pings.add(CompletableFuture.failedFuture(
                        new IllegalStateException("not asked: the lock backend is closed")));
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
        return new Reachability(nodes, nodes.size());
    }

    /** Why a call failed, for the health check: without the lock's name, which a ping does not have. */
    private String inPlainWords(Throwable cause) {
        if (cause instanceof TimeoutException) {
            return "no answer within distributed-lock.operation-timeout=" + operationTimeout;
        }
        return RedisErrorReply.describe(cause, RedisErrorReply.SPRING_DATA_REDIS_CREDENTIALS);
    }

    /**
     * Renews in lanes, a few per Cluster master (a few in all elsewhere): each lane runs its share of
     * the master's script calls one after another on a thread of its own, and reports each as it
     * answers. A master that stops answering holds up only its own lanes; while one of them is still
     * blocked (Jedis waits for its socket timeout), the next rounds report that master's leases as
     * failed at once instead of sending more calls to it, so blocked threads stay a few per master.
     * On a Jedis Cluster without replica acknowledgements, a master's calls go to it as one pipeline, in a single lane
     * ({@link #renewPipelined}): hundreds of round trips one after another do not fit in a round
     * on a loaded machine.
     */
    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        if (renewals.isEmpty()) {
            return;
        }
        long deadline = deadline();
        Topology known = topology;
        if (known == null) {
            known = readFirstTopology(deadline);
            if (known == null) {
                for (int i = 0; i < renewals.size(); i++) {
                    outcomes.outcome(i, RenewalOutcome.FAILED);
                }
                return;
            }
            topology = known;
        }
        else if (known.isStale()) {
            refreshTopologyInBackground();
        }
        List<List<Integer>> batches = LockScripts.batches(renewals, known.cluster());
        Map<String, List<Integer>> lanes = new LinkedHashMap<>();
        for (int b = 0; b < batches.size(); b++) {
            String node = known.masterOf(renewals.get(batches.get(b).get(0)).key().storeKey());
            lanes.computeIfAbsent(node, n -> new ArrayList<>()).add(b);
        }
        int round = rounds.getAndIncrement() * 7919;
        // With replica acknowledgements each renewal call is followed by WAIT on its own connection
        // (renewBatch), which the pipeline does not do: those go call by call.
        boolean pipelined = known.pipelined() && !replicaAcks.enabled();
        BlockingQueue<Answer> answers = new LinkedBlockingQueue<>();
        boolean[] reported = new boolean[batches.size()];
        int pending = batches.size();
        for (Map.Entry<String, List<Integer>> node : lanes.entrySet()) {
            List<Lane> previous = lanesInFlight.get(node.getKey());
            if (previous != null && previous.stream().anyMatch(lane -> lane.isStuck(timeoutNanos))) {
                // That master has not answered a renewal of an earlier round: do not pile more onto it.
                for (int b : node.getValue()) {
                    reported[b] = true;
                    pending--;
                    for (int index : batches.get(b)) {
                        outcomes.outcome(index, RenewalOutcome.FAILED);
                    }
                }
                continue;
            }
            // Each round starts elsewhere in the list, so that the calls a round runs out of time for
            // are not the same ones every round.
            List<Integer> calls = new ArrayList<>(node.getValue());
            Collections.rotate(calls, round);
            List<Lane> started = new ArrayList<>(LANES_PER_MASTER);
            if (pipelined) {
                Lane lane = new Lane();
                lane.task = new FutureTask<>(() -> {
                    renewPipelined(node.getKey(), renewals, batches, calls, deadline, lane, answers);
                    return null;
                });
                started.add(lane);
            }
            for (int l = 0; l < LANES_PER_MASTER && l < calls.size() && !pipelined; l++) {
                List<Integer> share = new ArrayList<>();
                for (int i = l; i < calls.size(); i += LANES_PER_MASTER) {
                    share.add(calls.get(i));
                }
                Lane lane = new Lane();
                lane.task = new FutureTask<>(() -> {
                    for (int b : share) {
                        if (System.nanoTime() - deadline > 0) {
                            return null;
                        }
                        lane.callStartedAt = System.nanoTime();
                        try {
                            answers.add(new Answer(b, renewBatch(renewals, batches.get(b), deadline)));
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
                    // Closed: the leases are reported failed below.
                }
            }
            lanesInFlight.put(node.getKey(), started);
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
            reported[answer.batch()] = true;
            pending--;
            List<Integer> batch = batches.get(answer.batch());
            for (int i = 0; i < batch.size(); i++) {
                outcomes.outcome(batch.get(i), answer.result() == null ? RenewalOutcome.FAILED
                        : renewalOutcome((Long) answer.result().get(i)));
            }
        }
        for (int b = 0; b < batches.size(); b++) {
            if (!reported[b]) {
                // Not sent: never will be (the lane checks the deadline). Sent: a late renewal only
                // extends our own lease, which is then reported lost or renewed by the next round.
                for (int index : batches.get(b)) {
                    outcomes.outcome(index, RenewalOutcome.FAILED);
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** 1: renewed; 0: the key is gone or not ours; {@link #UNCONFIRMED}: renewed, but too few replicas have it. */
    private static RenewalOutcome renewalOutcome(long answer) {
        return answer == 1L ? RenewalOutcome.RENEWED : answer == UNCONFIRMED ? RenewalOutcome.FAILED
                : RenewalOutcome.LOST;
    }

    /**
     * A renewal the master made but too few replicas confirmed. It counts as failed, not renewed: a
     * replica promoted now would still have the old expiry, so the handle keeps its old deadline, and the
     * watchdog tries again. Not lost either: the lock is still ours on the master.
     */
    private static final long UNCONFIRMED = -1;

    /**
     * A master's renewal calls of one round on a Jedis Cluster, on a lane's thread: all of them in
     * one pipeline to that master ({@link JedisClusterRenewalPipeline}), reported together when it
     * answers; then, one by one through the cluster client, those the master refused (a slot that
     * moved or is migrating: the client follows {@code MOVED} and {@code ASK}). If the pipeline's
     * connection fails, the master's leases are reported failed at once.
     */
    private void renewPipelined(String node, List<LeaseRenewal> renewals, List<List<Integer>> batches,
            List<Integer> calls, long deadline, Lane lane, BlockingQueue<Answer> answers) {
        // Checked before sending only: a pipeline sent late (the pool made the lane wait) extends
        // nothing but leases that still hold our tokens, which the next round counts in any case.
        if (System.nanoTime() - deadline > 0) {
            return;
        }
        List<List<String>> keys = new ArrayList<>(calls.size());
        List<List<String>> args = new ArrayList<>(calls.size());
        for (int b : calls) {
            List<String> callKeys = new ArrayList<>();
            List<String> callArgs = new ArrayList<>();
            for (int index : batches.get(b)) {
                LeaseRenewal renewal = renewals.get(index);
                callKeys.add(renewal.key().storeKey());
                callArgs.add(renewal.token());
                callArgs.add(Long.toString(renewal.ttlMillis()));
            }
            keys.add(callKeys);
            args.add(callArgs);
        }
        List<List<Object>> replies;
        lane.callStartedAt = System.nanoTime();
        try {
            replies = template.execute((RedisCallback<List<List<Object>>>) connection ->
                    JedisClusterRenewalPipeline.send(connection, node, LockScripts.RENEW, keys, args), true);
        }
        catch (RuntimeException ex) {
            renewalRefusals.failed(ex);
            for (int b : calls) {
                answers.add(new Answer(b, null));
            }
            return;
        }
        finally {
            lane.callStartedAt = 0;
        }
        List<Integer> refused = new ArrayList<>();
        for (int c = 0; c < calls.size(); c++) {
            List<Object> reply = replies == null ? null : replies.get(c);
            if (reply == null) {
                refused.add(calls.get(c));
            }
            else {
                answers.add(new Answer(calls.get(c), reply));
            }
        }
        if (!refused.isEmpty()) {
            // Our map of slots is out of date, or a slot is on the move: read it again.
            refreshTopologyInBackground();
        }
        for (int b : refused) {
            if (System.nanoTime() - deadline > 0) {
                return;
            }
            lane.callStartedAt = System.nanoTime();
            try {
                answers.add(new Answer(b, renewBatch(renewals, batches.get(b), deadline)));
            }
            finally {
                lane.callStartedAt = 0;
            }
        }
    }

    /** One renewal script call, on a lane's thread; {@code null} if it failed. */
    private List<Object> renewBatch(List<LeaseRenewal> renewals, List<Integer> batch, long deadline) {
        List<String> keys = new ArrayList<>(batch.size());
        Object[] args = new Object[batch.size() * 2];
        for (int i = 0; i < batch.size(); i++) {
            LeaseRenewal renewal = renewals.get(batch.get(i));
            keys.add(renewal.key().storeKey());
            args[2 * i] = renewal.token();
            args[2 * i + 1] = Long.toString(renewal.ttlMillis());
        }
        try {
            if (replicaAcks.enabled()) {
                return renewAndConfirm(keys, args, deadline + replicaAcks.timeout().toNanos());
            }
            return withDeadline(deadline, () -> retryingClusterRefusals(deadline, () -> template.execute(RENEW, keys, args)));
        }
        catch (RuntimeException ex) {
            renewalRefusals.failed(ex);
            return null;
        }
    }

    /** A renewal batch and its {@code WAIT} on one connection; renewals too few replicas have are {@link #UNCONFIRMED}. */
    private List<Object> renewAndConfirm(List<String> keys, Object[] args, long deadline) {
        List<String> argStrings = new ArrayList<>(args.length);
        for (Object arg : args) {
            argStrings.add((String) arg);
        }
        long[] answers = withDeadline(deadline, () -> template.execute(
                (RedisCallback<long[]>) connection -> renewAndWait(connection, keys, argStrings)));
        boolean confirmed = replicaAcks.satisfiedBy(answers[keys.size()]);
        List<Object> result = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            result.add(answers[i] == 1L && !confirmed ? UNCONFIRMED : answers[i]);
        }
        return result;
    }

    /**
     * The first map of slots, which the first renewals wait for. Spring Data reads it from a node
     * picked at random (Jedis's topology provider shuffles them), and a hung master answers only
     * after the client's socket timeout: so a read that has not answered within an eighth of the
     * operation timeout is left running and another starts, on the renewal threads, until one
     * answers or the round's deadline passes. At most {@link #FIRST_TOPOLOGY_READS} reads.
     *
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
                        // The old map stays; it only groups renewals, it never routes a command.
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

    private record Answer(int batch, List<Object> result) {
    }

    /** One thread's share of a master's renewal calls in one round. */
    private static final class Lane {

        volatile FutureTask<Void> task;
        /** When the call under way was sent, in {@link System#nanoTime()}; 0 between calls. */
        volatile long callStartedAt;

        /** Whether a call has been waiting for its master longer than {@code nanos}. */
        boolean isStuck(long nanos) {
            long started = callStartedAt;
            return task != null && !task.isDone() && started != 0 && System.nanoTime() - started > nanos;
        }
    }

    /**
     * Which master serves each slot, as last read: to put each master's renewals in a lane of their
     * own. Commands are routed by the client, except a Jedis renewal pipeline, which goes to the
     * master this map names; a master refuses ({@code MOVED}) what is no longer its own, and that is
     * sent again through the client. So a stale map costs at most some isolation and some round
     * trips until the next refresh.
     *
     * @param cluster whether the connection goes to a Redis Cluster
     * @param masters the master of each slot ({@code null} where unknown); empty if not a Cluster
     * @param readAt when it was read, in {@link System#nanoTime()}
     * @param pipelined whether a master's renewals go to it as one Jedis pipeline
     *        ({@link JedisClusterRenewalPipeline}) rather than one script call after another
     */
    private record Topology(boolean cluster, String[] masters, long readAt, boolean pipelined) {

        static Topology read(RedisConnection connection) {
            RedisConnection raw = unwrap(connection);
            if (!(raw instanceof RedisClusterConnection clusterConnection)) {
                return new Topology(false, new String[0], System.nanoTime(), false);
            }
            // By name first: JedisClusterRenewalPipeline refers to Jedis, which may not be there.
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

        String masterOf(String key) {
            if (!cluster) {
                return "";
            }
            String master = masters[ClusterSlotHashUtil.calculateSlot(key)];
            return master != null ? master : "?";
        }
    }

    /**
     * The connection a template callback runs on, without Spring Data's wrappers around it: the string-converting
     * decorator of a {@code StringRedisTemplate}, and a transaction-bound connection's proxy. The Jedis Cluster
     * pipeline needs the real connection to find its client's node pools. The callbacks that need it are run with
     * {@code exposeConnection} set: otherwise the template hands them a close-suppressing proxy with no way to the
     * connection inside (Spring Data Redis 4 does so on a Cluster, and the pipeline was then never used).
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

    private long deadline() {
        return System.nanoTime() + timeoutNanos;
    }

    /**
     * Runs {@code command} on the executor and waits for it until {@code deadline}, whatever the
     * calling thread's interrupt flag says (it is restored before returning).
     *
     * @param acquiringToken the token {@code command} acquires with, or {@code null} if it acquires
     *        nothing: an acquire that times out under way is listed, so its undo waits for it
     * @throws LockBackendException if Redis fails the command or does not answer in time; the
     *         command may have run all the same
     */
    private <T> T call(LockKey key, String operation, long deadline, String acquiringToken, Supplier<T> command) {
        Command<T> task = new Command<>(acquiringToken,
                () -> withDeadline(deadline, () -> retryingClusterRefusals(deadline, command)));
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
                    // Still queued: it is never sent. Under way: it may still run, and the caller
                    // undoes it. Ended in this very moment: its outcome stands (next loop).
                    if (task.abandon()) {
                        throw new LockBackendException(key.name(), "Redis did not answer the " + operation
                                + " of lock " + key.printableName() + " (" + key.printableStoreKey()
                                + ") within distributed-lock.operation-timeout=" + operationTimeout
                                + ". Is Redis reachable?", ex);
                    }
                }
                catch (ExecutionException ex) {
                    Throwable cause = ex.getCause();
                    throw new LockBackendException(key.name(), "Redis failed the " + operation + " of lock "
                            + key.printableName() + " (" + key.printableStoreKey() + "): "
                            + RedisErrorReply.describe(cause, RedisErrorReply.SPRING_DATA_REDIS_CREDENTIALS), cause);
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
     * One command on the executor. Its own state, because {@link FutureTask#cancel} answers
     * {@code true} for a task already under way too, which cannot tell "never sent" from "may
     * still run".
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
        /** Set when the caller gave up while it ran; it is then in {@link #lateAcquires} until it ends. */
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
         *
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
            // Listed before the state is read again, and run() reads the flag after setting the
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
     * Sends again, until the deadline, what a Cluster refused for the moment: {@code TRYAGAIN} (a
     * multi-key command while its slot is half-way through a migration) and {@code CLUSTERDOWN}
     * (during a failover). Every lock command is idempotent for its token, so a retry is safe. Runs
     * on the executor, never on the caller's thread.
     */
    private static <T> T retryingClusterRefusals(long deadline, Supplier<T> command) {
        long pauseNanos = RETRY_PAUSE_NANOS;
        while (true) {
            try {
                return command.get();
            }
            catch (RuntimeException ex) {
                if (!(hasMessage(ex, "TRYAGAIN") || hasMessage(ex, "CLUSTERDOWN"))
                        || deadline - System.nanoTime() < pauseNanos) {
                    throw ex;
                }
                LockSupport.parkNanos(pauseNanos);
                pauseNanos = Math.min(pauseNanos * 2, MAX_RETRY_PAUSE_NANOS);
            }
        }
    }

    /** Runs {@code command} on this thread with {@code deadline} as the bound {@link LateScriptGuard} checks. */
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
     * Spring Data's script execution ({@code EVALSHA}, then {@code EVAL} on {@code NOSCRIPT}), except
     * that nothing is sent once the caller has given up: neither a script whose thread only now got
     * a connection (Jedis's pool makes borrowers wait), nor the {@code EVAL} after a {@code NOSCRIPT}
     * that came back late. The caller is by then undoing the command; one that ran after the undo
     * would leave a key behind that nobody owns.
     */
    private static final class LateScriptGuard extends DefaultScriptExecutor<String> {

        LateScriptGuard(StringRedisTemplate template) {
            super(template);
        }

        @Override
        protected <T> T eval(RedisConnection connection, RedisScript<T> script, ReturnType returnType, int numKeys,
                byte[][] keysAndArgs, RedisSerializer<T> resultSerializer) {
            refuseIfLate();
            Object result;
            try {
                result = connection.scriptingCommands().evalSha(script.getSha1(), returnType, numKeys, keysAndArgs);
            }
            catch (RuntimeException ex) {
                if (!hasMessage(ex, "NOSCRIPT")) {
                    throw ex;
                }
                refuseIfLate();
                result = connection.scriptingCommands().eval(scriptBytes(script), returnType, numKeys, keysAndArgs);
            }
            return script.getResultType() == null ? null : deserializeResult(resultSerializer, result);
        }

        private static void refuseIfLate() {
            Long deadline = DEADLINE.get();
            if (deadline != null && System.nanoTime() - deadline > 0) {
                throw new QueryTimeoutException("Not sent: the lock command's operation timeout has passed");
            }
        }
    }

    /** Whether {@code ex} or one of its causes has a message containing {@code text}. */
    private static boolean hasMessage(Throwable ex, String text) {
        for (Throwable t = ex; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains(text)) {
                return true;
            }
        }
        return false;
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
