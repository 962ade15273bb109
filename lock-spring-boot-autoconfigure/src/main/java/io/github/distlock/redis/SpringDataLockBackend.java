package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.core.types.Expiration;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockKey;

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
 * knows about. A command still queued when its caller gave up is cancelled and never sent; one
 * already sent may still run, and then the caller undoes it, as {@link LockBackend} prescribes.
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
 * 1,000 keys each), the groups run side by side on the executor, and each outcome is reported as
 * its group answers.
 */
public final class SpringDataLockBackend implements LockBackend, AutoCloseable {

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
    private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long MAX_RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final StringRedisTemplate template;
    private final Duration operationTimeout;
    private final long timeoutNanos;
    private final String releaseChannel;
    private final ThreadPoolExecutor executor;
    /** Set once a server refuses {@code SET NX GET} (Redis before 7.0): scripts take over. */
    private volatile boolean setNxGetRefused;
    /** Whether the factory's connections go to a Cluster; learnt from the first renewal. */
    private volatile Boolean cluster;

    /**
     * @param connectionFactory Spring Data Redis's connection factory, with any driver
     * @param operationTimeout upper bound on each lock command
     * @param releaseChannel where a release announces that it handed the lock to a waiter
     *        ({@link RedisReleaseSubscriber#releaseChannel(String)})
     */
    public SpringDataLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout,
            String releaseChannel) {
        this.template = new StringRedisTemplate(Objects.requireNonNull(connectionFactory, "connectionFactory"));
        this.operationTimeout = operationTimeout;
        this.timeoutNanos = operationTimeout.toNanos();
        this.releaseChannel = releaseChannel;
        this.executor = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                daemonThreads());
        executor.allowCoreThreadTimeOut(true);
    }

    private static ThreadFactory daemonThreads() {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, "distributed-lock-redis-" + count.incrementAndGet());
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
    public AcquireAttempt tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued) {
        return acquireScript(key, token, ttlMillis, queueMillis, queued, true);
    }

    /**
     * A bare {@code SET NX PX GET}: no script runs on the server. Answered with our own token, it was
     * retried after its first delivery took the lock: ours all the same, the lease counted from
     * before the first delivery.
     */
    @Override
    public AcquireAttempt tryAcquireWithoutFencingToken(LockKey key, String token, long ttlMillis) {
        if (!setNxGetRefused) {
            byte[] redisKey = bytes(key.redisKey());
            byte[] value = bytes(token);
            try {
                byte[] previous = call(key, "acquire", deadline(), () -> template.execute(
                        (RedisCallback<byte[]>) connection -> connection.stringCommands().setGet(redisKey, value,
                                Expiration.milliseconds(ttlMillis), SetOption.ifAbsent())));
                return previous == null || token.equals(new String(previous, StandardCharsets.UTF_8))
                        ? AcquireAttempt.acquired(0, ttlMillis) : AcquireAttempt.notAcquired(0, 0);
            }
            catch (LockBackendException ex) {
                if (!hasMessage(ex, "syntax error")) {
                    throw ex;
                }
                // Redis 6.2: NX and GET together are a syntax error, so nothing ran.
                setNxGetRefused = true;
            }
        }
        return acquireScript(key, token, ttlMillis, 0, false, false);
    }

    private AcquireAttempt acquireScript(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        List<Object> reply = script(key, "acquire", ACQUIRE, token, Long.toString(ttlMillis),
                Long.toString(LockScripts.counterLifetime(ttlMillis)), Long.toString(queueMillis), queued ? "1" : "0",
                fencingToken ? "1" : "0");
        if ((Long) reply.get(0) == 1L) {
            return AcquireAttempt.acquired((Long) reply.get(1), (Long) reply.get(2));
        }
        return AcquireAttempt.notAcquired((Long) reply.get(1), (Long) reply.get(2));
    }

    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        return script(key, "fencing token", FENCE, token, Long.toString(LockScripts.counterLifetime(ttlMillis)));
    }

    @Override
    public boolean release(LockKey key, String token) {
        return script(key, "release", RELEASE, token, releaseChannel,
                Long.toString(LockScripts.FENCE_COUNTER_TTL_MILLIS)) == 1L;
    }

    @Override
    public AcquireAttempt stopWaiting(LockKey key, String token, long ttlMillis) {
        List<Object> reply = script(key, "cancel", CANCEL, token, Long.toString(LockScripts.counterLifetime(ttlMillis)));
        if ((Long) reply.get(0) == 1L) {
            return AcquireAttempt.acquired((Long) reply.get(1), (Long) reply.get(2));
        }
        return AcquireAttempt.notAcquired(0, 0);
    }

    /** Runs one of the per-key scripts; they all take the lock's four keys. */
    private <T> T script(LockKey key, String operation, RedisScript<T> script, Object... args) {
        List<String> keys = LockScripts.keys(key);
        return call(key, operation, deadline(), () -> template.execute(script, keys, args));
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        if (renewals.isEmpty()) {
            return;
        }
        long deadline = deadline();
        Boolean toCluster = cluster;
        if (toCluster == null) {
            try {
                toCluster = call(renewals.get(0).key(), "renewal", deadline,
                        () -> template.execute((RedisCallback<Boolean>) c -> c instanceof RedisClusterConnection));
                cluster = toCluster;
            }
            catch (LockBackendException ex) {
                for (int i = 0; i < renewals.size(); i++) {
                    outcomes.outcome(i, RenewalOutcome.FAILED);
                }
                return;
            }
        }
        List<List<Integer>> batches = LockScripts.batches(renewals, Boolean.TRUE.equals(toCluster));
        BlockingQueue<Integer> answered = new LinkedBlockingQueue<>();
        List<FutureTask<List<Object>>> calls = new ArrayList<>(batches.size());
        for (int b = 0; b < batches.size(); b++) {
            List<Integer> batch = batches.get(b);
            List<String> keys = new ArrayList<>(batch.size());
            Object[] args = new Object[batch.size() * 2];
            for (int i = 0; i < batch.size(); i++) {
                LeaseRenewal renewal = renewals.get(batch.get(i));
                keys.add(renewal.key().redisKey());
                args[2 * i] = renewal.token();
                args[2 * i + 1] = Long.toString(renewal.ttlMillis());
            }
            int index = b;
            FutureTask<List<Object>> call = new FutureTask<>(
                    () -> retryingClusterRefusals(deadline, () -> template.execute(RENEW, keys, args))) {
                @Override
                protected void done() {
                    answered.add(index);
                }
            };
            calls.add(call);
            try {
                executor.execute(call);
            }
            catch (RejectedExecutionException ex) {
                call.cancel(false);
            }
        }
        boolean[] reported = new boolean[batches.size()];
        int pending = batches.size();
        boolean interrupted = false;
        while (pending > 0) {
            Integer b;
            try {
                long left = deadline - System.nanoTime();
                b = left > 0 ? answered.poll(left, TimeUnit.NANOSECONDS) : answered.poll();
            }
            catch (InterruptedException ex) {
                interrupted = true;
                continue;
            }
            if (b == null) {
                break;
            }
            if (reported[b]) {
                continue;
            }
            reported[b] = true;
            pending--;
            List<Object> result = renewed(calls.get(b));
            List<Integer> batch = batches.get(b);
            for (int i = 0; i < batch.size(); i++) {
                outcomes.outcome(batch.get(i), result == null ? RenewalOutcome.FAILED
                        : ((Long) result.get(i) == 1L ? RenewalOutcome.RENEWED : RenewalOutcome.LOST));
            }
        }
        for (int b = 0; b < batches.size(); b++) {
            if (!reported[b]) {
                // Not yet sent: never will be. Already sent: a late renewal only extends our own lease.
                calls.get(b).cancel(false);
                for (int index : batches.get(b)) {
                    outcomes.outcome(index, RenewalOutcome.FAILED);
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The reply of a finished renewal call, or {@code null} if it failed. */
    private static List<Object> renewed(FutureTask<List<Object>> call) {
        try {
            return call.get(0, TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException | CancellationException | TimeoutException | InterruptedException ex) {
            if (ex instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return null;
        }
    }

    private long deadline() {
        return System.nanoTime() + timeoutNanos;
    }

    /**
     * Runs {@code command} on the executor and waits for it until {@code deadline}, whatever the
     * calling thread's interrupt flag says (it is restored before returning).
     *
     * @throws LockBackendException if Redis fails the command or does not answer in time; the
     *         command may have run all the same
     */
    private <T> T call(LockKey key, String operation, long deadline, Supplier<T> command) {
        FutureTask<T> task = new FutureTask<>(() -> retryingClusterRefusals(deadline, command));
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
                    return task.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                }
                catch (TimeoutException ex) {
                    // Still queued: cancelled, it is never sent. Already sent: it may run, and the
                    // caller undoes it. Finished in this very moment: its outcome stands (next loop).
                    if (task.cancel(false)) {
                        throw new LockBackendException(key.name(), "Redis did not answer the " + operation
                                + " of lock " + key.printableName() + " (" + key.printableRedisKey()
                                + ") within distributed-lock.operation-timeout=" + operationTimeout
                                + ". Is Redis reachable?", ex);
                    }
                }
                catch (ExecutionException ex) {
                    Throwable cause = ex.getCause();
                    throw new LockBackendException(key.name(), "Redis failed the " + operation + " of lock "
                            + key.printableName() + " (" + key.printableRedisKey() + "): " + cause.getMessage(), cause);
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
