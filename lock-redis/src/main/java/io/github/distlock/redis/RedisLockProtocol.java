package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.InspectableLockBackend.LockState;
import io.github.distlock.core.InspectableLockBackend.NodeReachability;
import io.github.distlock.core.InspectableLockBackend.Reachability;
import io.github.distlock.core.LockBackend.AcquireResult;
import io.github.distlock.core.LockBackend.LeaseRenewal;
import io.github.distlock.core.LockBackend.RenewalOutcome;
import io.github.distlock.core.LockBackend.RenewalOutcomes;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.RedisLockTransport.Acknowledged;
import io.github.distlock.redis.RedisLockTransport.RenewalCall;
import io.github.distlock.redis.RedisLockTransport.RenewalTopology;
import io.github.distlock.redis.RedisLockTransport.Reply;
import io.github.distlock.redis.RedisLockTransport.ReplyType;
import io.github.distlock.redis.RedisLockTransport.Role;

/**
 * The Redis lock protocol, written once for every driver: which command or script each
 * lock operation sends, on which keys and with which arguments, what each answer means
 * ({@link AcquireResult}, {@link RenewalOutcome}, {@link LockState}), the fallback for
 * Redis 6.2, the replica confirmation steps, how renewals are grouped, and which refusals
 * are sent again. It sends through a {@link RedisLockTransport}, which does the I/O:
 * {@link LettuceLockBackend} and {@link SpringDataLockBackend} are this protocol over
 * their transport.
 *
 * <p>
 * The usual acquisition runs no script: a bare {@code SET NX PX GET}. {@code GET} makes
 * it safe to send twice: a second delivery answers with our own token, which means
 * "ours". Redis 6.2 refuses {@code NX} with {@code GET} (a syntax error, so nothing ran);
 * from then on {@code acquire.lua} does it.
 *
 * <p>
 * <b>A re-sent release.</b> A release whose first delivery ran and whose reply was lost
 * finds, when it is sent again, the lock no longer ours: its own first delivery deleted
 * it (or handed it over). That answer counts as released. It cannot be told from a lock
 * lost in that very moment, but the holder held it until it asked to release (its lease
 * had not run out, or the watchdog would have called it lost), and calling the release
 * that ended the work a loss would fail work that ran under the lock.
 *
 * <pre>{@code
 * RedisLockProtocol protocol = new RedisLockProtocol(transport, HandOverChannel.forEveryKey("lock:released"),
 *         ReplicaAcks.NONE, null);
 * protocol.tryAcquire(key, token, 30_000);   // SET lock:{order:42} <token> NX PX 30000 GET
 * protocol.release(key, token);              // EVALSHA <release.lua> 4 lock:{order:42} ... <token> ...
 * }</pre>
 */
final class RedisLockProtocol {

    /** Suffix of the fencing counter's key. */
    static final String FENCE_SUFFIX = ":fence";

    /** Suffix of the wait queue: a sorted set of waiters' tokens by arrival. */
    static final String QUEUE_SUFFIX = ":queue";

    /**
     * Suffix of the waiters' entries: a hash of token to
     * {@code <alive until ms>:<lease ms>}.
     */
    static final String WAITING_SUFFIX = ":waiting";

    /**
     * Suffix of a Redlock wake-up line on its arbiter node: a sorted set of waiter ids by
     * arrival (ms).
     */
    static final String REDLOCK_LINE_SUFFIX = ":redlock-line";

    /**
     * Suffix of the alive-until (ms) of each waiter in a Redlock wake-up line: a hash.
     */
    static final String REDLOCK_ALIVE_SUFFIX = ":redlock-alive";

    private static final byte[] FENCE_COUNTER_TTL_BYTES = bytes(Long.toString(LockScripts.FENCE_COUNTER_TTL_MILLIS));

    private static final byte[] YES = bytes("1");

    private static final byte[] NO = bytes("0");

    private static final byte[][] NO_ARGUMENTS = new byte[0][];

    private static final long FIRST_RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private static final long MAX_RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final RedisLockTransport transport;

    private final Function<LockKey, ? extends HandOverChannel> handOverChannels;

    private final ReplicaAcks replicaAcks;

    private final long ackTimeoutNanos;

    /**
     * A Redlock node's own vote scripts, sent by digest only; {@code null} for any other
     * backend.
     */
    private final NodeIncarnation incarnation;

    /**
     * Set once a server refuses {@code SET NX GET} (Redis before 7.0): scripts take over.
     */
    private volatile boolean setNxGetRefused;

    /**
     * @param handOverChannels where a release of a key publishes that it handed the lock
     * over to a waiter
     * @param replicaAcks how many replicas must confirm each lock write
     * @param incarnation the scripts a Redlock node votes with, or {@code null}
     */
    RedisLockProtocol(RedisLockTransport transport, Function<LockKey, ? extends HandOverChannel> handOverChannels,
            ReplicaAcks replicaAcks, NodeIncarnation incarnation) {
        this.transport = transport;
        this.handOverChannels = handOverChannels;
        this.replicaAcks = replicaAcks;
        this.ackTimeoutNanos = replicaAcks.enabled() ? replicaAcks.timeout().toNanos() : 0;
        this.incarnation = incarnation;
    }

    // ------------------------------------------------------------------------------------------------
    // acquire

    /**
     * A free lock, with a bare {@code SET NX PX GET}; on a Redlock node, its vote script.
     * Answered with our own token, the command was re-sent and its first delivery took
     * the lock: ours all the same, the lease counted from before the first delivery.
     */
    AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
        if (incarnation != null) {
            long sent = System.nanoTime();
            Reply<List<Object>> vote = script(key, "acquire", incarnation.scripts().vote(), ReplyType.ARRAY,
                    redlockKeys(key, false), voteArguments(token, ttlMillis), Role.ACQUIRE, token,
                    transport.deadline());
            return voteResult(vote.value(), sent, System.nanoTime(), ttlMillis);
        }
        if (!setNxGetRefused) {
            byte[] value = bytes(token);
            try {
                Reply<byte[]> previous = setIfAbsentGet(key, token, value, ttlMillis, transport.deadline());
                return confirmed(key, token, ttlMillis, setResult(previous.value(), value, ttlMillis));
            }
            catch (LockBackendException ex) {
                if (!LockCommandErrors.isSyntaxError(ex)) {
                    throw ex;
                }
                // Redis 6.2: NX and GET together are a syntax error, so nothing ran.
                setNxGetRefused = true;
            }
        }
        return confirmed(key, token, ttlMillis, acquireScript(key, token, ttlMillis, 0, false, false));
    }

    /**
     * {@code acquire.lua}: the lock, a fencing token and a place in the wait queue, as
     * asked.
     */
    AcquireResult tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        return confirmed(key, token, ttlMillis,
                acquireScript(key, token, ttlMillis, queueMillis, queued, fencingToken));
    }

    /**
     * {@link #tryAcquire(LockKey, String, long)} without waiting, or {@code null} where
     * it cannot be sent without blocking: the transport cannot, or replicas must confirm
     * the write ({@code WAIT} is a round trip of its own).
     */
    CompletableFuture<AcquireResult> tryAcquireAsync(LockKey key, String token, long ttlMillis) {
        if (replicaAcks.enabled()) {
            return null;
        }
        if (incarnation != null) {
            long sent = System.nanoTime();
            CompletableFuture<Reply<List<Object>>> vote = transport.scriptAsync(key, "acquire",
                    incarnation.scripts().vote(), ReplyType.ARRAY, redlockKeys(key, false),
                    voteArguments(token, ttlMillis));
            return vote == null ? null
                    : vote.thenApply(answer -> voteResult(answer.value(), sent, System.nanoTime(), ttlMillis));
        }
        if (setNxGetRefused) {
            return acquireScriptAsync(key, token, ttlMillis);
        }
        byte[] value = bytes(token);
        CompletableFuture<Reply<byte[]>> reply = transport.setIfAbsentGetAsync(key, value, ttlMillis);
        if (reply == null) {
            return null;
        }
        CompletableFuture<AcquireResult> result = new CompletableFuture<>();
        reply.whenComplete((answer, failure) -> {
            if (failure == null) {
                result.complete(setResult(answer.value(), value, ttlMillis));
            }
            else if (failure instanceof LockBackendException ex && LockCommandErrors.isSyntaxError(ex)) {
                // Redis 6.2: NX and GET together are a syntax error, so nothing ran: the
                // script instead.
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
        CompletableFuture<Reply<List<Object>>> reply = transport.scriptAsync(key, "acquire", LockScripts.ACQUIRE,
                ReplyType.ARRAY, keys(key), acquireArguments(token, ttlMillis, 0, false, false));
        return reply == null ? null : reply.thenApply(answer -> acquireResult(answer.value()));
    }

    private AcquireResult acquireScript(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        Reply<List<Object>> reply = script(key, "acquire", LockScripts.ACQUIRE, ReplyType.ARRAY, keys(key),
                acquireArguments(token, ttlMillis, queueMillis, queued, fencingToken), Role.ACQUIRE, token,
                transport.deadline());
        return acquireResult(reply.value());
    }

    /**
     * A Redlock arbiter node's acquire ({@code redlock_acquire.lua}): the lock if it is
     * free; if not, instance {@code waiterId} joins the key's wake-up line on this node,
     * or keeps its place there, for {@code aliveMillis}.
     */
    AcquireResult tryAcquireOrWait(LockKey key, String token, long ttlMillis, String waiterId, long aliveMillis) {
        long sent = System.nanoTime();
        Reply<List<Object>> reply = script(key, "acquire", arbiterVote(), ReplyType.ARRAY, redlockKeys(key, true),
                redlockAcquireArguments(token, ttlMillis, waiterId, aliveMillis), Role.ACQUIRE, token,
                transport.deadline());
        return voteResult(reply.value(), sent, System.nanoTime(), ttlMillis);
    }

    /** {@link #tryAcquireOrWait} without waiting, or {@code null}. */
    CompletableFuture<AcquireResult> tryAcquireOrWaitAsync(LockKey key, String token, long ttlMillis, String waiterId,
            long aliveMillis) {
        long sent = System.nanoTime();
        CompletableFuture<Reply<List<Object>>> reply = transport.scriptAsync(key, "acquire", arbiterVote(),
                ReplyType.ARRAY, redlockKeys(key, true),
                redlockAcquireArguments(token, ttlMillis, waiterId, aliveMillis));
        return reply == null ? null
                : reply.thenApply(answer -> voteResult(answer.value(), sent, System.nanoTime(), ttlMillis));
    }

    private LuaScript arbiterVote() {
        return incarnation != null ? incarnation.scripts().arbiterVote() : LockScripts.REDLOCK_ACQUIRE;
    }

    // ------------------------------------------------------------------------------------------------
    // replicas

    /** Whether lock writes count only once replicas confirm them. */
    boolean confirmsWrites() {
        return replicaAcks.enabled();
    }

    /**
     * An acquisition counts once enough replicas confirm it, when that is asked for; one
     * that is no longer ours by then (it expired, or a failover lost it) did not happen.
     */
    private AcquireResult confirmed(LockKey key, String token, long ttlMillis, AcquireResult attempt) {
        if (!replicaAcks.enabled() || !attempt.acquired()) {
            return attempt;
        }
        return confirm(key, token, ttlMillis) ? attempt : AcquireResult.notAcquired(0, 0);
    }

    /** A hand-over found in Redis, confirmed by the replicas when that is asked for. */
    AcquireResult confirmHandOver(LockKey key, String token, long ttlMillis, long fencingToken) {
        if (replicaAcks.enabled() && !confirm(key, token, ttlMillis)) {
            return AcquireResult.notAcquired(0, 0);
        }
        return AcquireResult.acquired(fencingToken, ttlMillis);
    }

    /**
     * Writes the lock again ({@code renew.lua}: compare-and-{@code PEXPIRE}, which
     * follows the lock's own write or hand-over in the replication stream) and waits for
     * the replicas, on one server connection.
     * @return {@code true} if the lock holds {@code token} and enough replicas have it;
     * {@code false} if it no longer holds {@code token} (nothing was written, nothing to
     * wait for)
     * @throws io.github.distlock.ReplicaAcknowledgementException if too few replicas
     * confirmed it in time
     */
    private boolean confirm(LockKey key, String token, long ttlMillis) {
        Acknowledged answer = transport.renewAndWait(key, new byte[][] { bytes(key.storeKey()) },
                new byte[][] { bytes(token), bytes(Long.toString(ttlMillis)) }, replicaAcks,
                transport.deadline() + ackTimeoutNanos);
        if ((Long) answer.renewed().get(0) != 1L) {
            return false;
        }
        if (answer.replicas() < 0) {
            throw LockCommandErrors.replicaCountUnknown(key);
        }
        replicaAcks.require(key, answer.replicas());
        return true;
    }

    // ------------------------------------------------------------------------------------------------
    // release

    /**
     * Compare-and-delete, or hand over to the longest-waiting live waiter
     * ({@code release.lua}).
     */
    boolean release(LockKey key, String token) {
        Reply<Long> reply = script(key, "release", LockScripts.RELEASE, ReplyType.INTEGER, keys(key),
                releaseArguments(key, token), Role.UNDO, token, transport.deadline());
        return released(reply);
    }

    /**
     * The release of a lock whose minimum hold has {@code remainingMillis} left: its
     * lease is cut to that, never lengthened, and the wait queue is left alone
     * ({@code release_after.lua}); with nothing left, {@link #release}. A re-sent one
     * that finds the lock gone counts as released, as for {@link #release}.
     */
    boolean releaseAfter(LockKey key, String token, long remainingMillis) {
        if (remainingMillis <= 0) {
            return release(key, token);
        }
        Reply<Long> reply = script(key, "release", LockScripts.RELEASE_AFTER, ReplyType.INTEGER,
                new byte[][] { bytes(key.storeKey()) },
                new byte[][] { bytes(token), bytes(Long.toString(remainingMillis)) }, Role.UNDO, token,
                transport.deadline());
        return released(reply);
    }

    /**
     * Sets the lease to {@code ttlMillis} if the lock holds {@code token}
     * ({@code extend.lua}); with replica acknowledgements, once enough replicas have the
     * new lease too.
     * @throws io.github.distlock.ReplicaAcknowledgementException if too few replicas
     * confirmed it in time
     */
    boolean extend(LockKey key, String token, long ttlMillis) {
        if (replicaAcks.enabled()) {
            return confirm(key, token, ttlMillis);
        }
        Reply<Long> reply = script(key, "extension", LockScripts.EXTEND, ReplyType.INTEGER,
                new byte[][] { bytes(key.storeKey()) }, new byte[][] { bytes(token), bytes(Long.toString(ttlMillis)) },
                Role.OTHER, null, transport.deadline());
        return reply.value() == 1L;
    }

    /** {@link #release} without waiting, or {@code null}. */
    CompletableFuture<Boolean> releaseAsync(LockKey key, String token) {
        CompletableFuture<Reply<Long>> reply = transport.scriptAsync(key, "release", LockScripts.RELEASE,
                ReplyType.INTEGER, keys(key), releaseArguments(key, token));
        return reply == null ? null : reply.thenApply(RedisLockProtocol::released);
    }

    /**
     * A Redlock node's release ({@code redlock_release.lua}): compare-and-delete and, if
     * it deleted, the release hint from the same script: on {@code channel}, or with
     * {@code wakeLine} to the head of the key's wake-up line on this node. No hint if
     * {@code channel} is {@code null}.
     */
    boolean releaseAndHint(LockKey key, String token, String channel, String hint, boolean wakeLine) {
        Reply<Long> reply = script(key, "release", LockScripts.REDLOCK_RELEASE, ReplyType.INTEGER,
                redlockKeys(key, channel != null && wakeLine), redlockReleaseArguments(token, channel, hint), Role.UNDO,
                token, transport.deadline());
        return released(reply);
    }

    /** {@link #releaseAndHint} without waiting, or {@code null}. */
    CompletableFuture<Boolean> releaseAndHintAsync(LockKey key, String token, String channel, String hint,
            boolean wakeLine) {
        CompletableFuture<Reply<Long>> reply = transport.scriptAsync(key, "release", LockScripts.REDLOCK_RELEASE,
                ReplyType.INTEGER, redlockKeys(key, channel != null && wakeLine),
                redlockReleaseArguments(token, channel, hint));
        return reply == null ? null : reply.thenApply(RedisLockProtocol::released);
    }

    /**
     * 1: it deleted (or handed over) our lock. Not ours, from a re-sent release: see the
     * class comment.
     */
    private static boolean released(Reply<Long> reply) {
        return reply.value() == 1L || reply.resent();
    }

    /**
     * A waiter leaves the queue ({@code cancel.lua}), and takes the lock if it was handed
     * to it meanwhile.
     */
    AcquireResult stopWaiting(LockKey key, String token, long ttlMillis) {
        List<Object> reply = this
            .<List<Object>>script(key, "cancel", LockScripts.CANCEL, ReplyType.ARRAY, keys(key),
                    new byte[][] { bytes(token), counterLifetime(ttlMillis) }, Role.UNDO, token, transport.deadline())
            .value();
        if ((Long) reply.get(0) == 1L) {
            return AcquireResult.acquired((Long) reply.get(1), (Long) reply.get(2));
        }
        return AcquireResult.notAcquired(0, 0);
    }

    // ------------------------------------------------------------------------------------------------
    // fencing

    /**
     * The lock's next fencing token ({@code fence.lua}), if it still holds {@code token};
     * 0 if not.
     */
    long issueFencingToken(LockKey key, String token, long ttlMillis) {
        LuaScript fence = incarnation != null ? incarnation.scripts().fence() : LockScripts.FENCE;
        Reply<Long> reply = script(key, "fencing token", fence, ReplyType.INTEGER, keys(key),
                new byte[][] { bytes(token), counterLifetime(ttlMillis) }, Role.OTHER, null, transport.deadline());
        return reply.value();
    }

    /**
     * Raises the fencing counter to {@code fencingToken} while the lock holds
     * {@code token} (Redlock).
     */
    boolean raiseFencingCounter(LockKey key, String token, long fencingToken, long ttlMillis) {
        String lock = key.storeKey();
        LuaScript raise = incarnation != null ? incarnation.scripts().raiseFence() : LockScripts.RAISE_FENCE;
        Reply<Long> reply = script(key, "fencing counter", raise, ReplyType.INTEGER,
                new byte[][] { bytes(lock), bytes(lock + FENCE_SUFFIX) },
                new byte[][] { bytes(token), bytes(Long.toString(fencingToken)), counterLifetime(ttlMillis) },
                Role.OTHER, null, transport.deadline());
        return reply.value() == 1L;
    }

    // ------------------------------------------------------------------------------------------------
    // renewal

    /**
     * Renews every lease still holding its token, with one {@code renew.lua} call per
     * group of up to 1,000 keys (in a Cluster, per slot), each master's calls as one
     * group. With replica acknowledgements, a renewal the master made but too few
     * replicas confirmed is {@link RenewalOutcome#FAILED}, not renewed: a replica
     * promoted now would have the old expiry, so the handle keeps its old deadline and
     * the watchdog tries again. Not lost either: the lock is still ours on the master.
     */
    void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        if (renewals.isEmpty()) {
            return;
        }
        long deadline = transport.deadline() + ackTimeoutNanos;
        RenewalTopology topology = transport.renewalTopology(deadline);
        if (topology == null) {
            for (int i = 0; i < renewals.size(); i++) {
                outcomes.outcome(i, RenewalOutcome.FAILED);
            }
            return;
        }
        Map<String, List<RenewalCall>> byMaster = new LinkedHashMap<>();
        for (List<Integer> batch : LockScripts.batches(renewals, topology.cluster())) {
            RenewalCall call = renewalCall(renewals, batch);
            byMaster.computeIfAbsent(topology.masterOf(call.key()), master -> new ArrayList<>()).add(call);
        }
        LuaScript script = incarnation != null ? incarnation.scripts().renew() : LockScripts.RENEW;
        long sent = System.nanoTime();
        transport.renew(script, byMaster, replicaAcks, deadline, (call, answers, acked) -> {
            if (answers != null && incarnation != null) {
                // redlock_renew.lua: the node's clock after the leases' answers.
                incarnation.serverClock()
                    .serverTime(sent, System.nanoTime(), serverMicros(answers, call.leases().size()));
            }
            boolean confirmed = !replicaAcks.enabled() || replicaAcks.satisfiedBy(acked);
            for (int i = 0; i < call.leases().size(); i++) {
                RenewalOutcome outcome;
                if (answers == null) {
                    outcome = RenewalOutcome.FAILED;
                }
                else if ((Long) answers.get(i) != 1L) {
                    outcome = RenewalOutcome.LOST;
                }
                else {
                    outcome = confirmed ? RenewalOutcome.RENEWED : RenewalOutcome.FAILED;
                }
                outcomes.outcome(call.leases().get(i), outcome);
            }
        });
    }

    private static RenewalCall renewalCall(List<LeaseRenewal> renewals, List<Integer> batch) {
        byte[][] keys = new byte[batch.size()][];
        byte[][] args = new byte[batch.size() * 2][];
        for (int i = 0; i < batch.size(); i++) {
            LeaseRenewal renewal = renewals.get(batch.get(i));
            keys[i] = bytes(renewal.key().storeKey());
            args[2 * i] = bytes(renewal.token());
            args[2 * i + 1] = bytes(Long.toString(renewal.ttlMillis()));
        }
        return new RenewalCall(batch, renewals.get(batch.get(0)).key(), keys, args);
    }

    // ------------------------------------------------------------------------------------------------
    // inspection

    /**
     * The lock's remaining lease, queue length and fencing counter ({@code inspect.lua}),
     * never its token.
     */
    LockState inspect(LockKey key) {
        List<Object> reply = this
            .<List<Object>>script(key, "inspection", LockScripts.INSPECT, ReplyType.ARRAY, keys(key), NO_ARGUMENTS,
                    Role.OTHER, null, transport.deadline())
            .value();
        return LockScripts.lockState(reply);
    }

    /**
     * Every master that serves locks, each of which must answer: a Cluster's masters each
     * hold a share.
     */
    Reachability ping(String name) {
        List<NodeReachability> masters = transport.pingEachMaster(name);
        return new Reachability(masters, masters.size());
    }

    // ------------------------------------------------------------------------------------------------
    // sending

    private <T> Reply<T> script(LockKey key, String operation, LuaScript script, ReplyType type, byte[][] keys,
            byte[][] args, Role role, String token, long deadline) {
        return retryingClusterRefusals(deadline,
                () -> transport.script(key, operation, script, type, keys, args, role, token, deadline));
    }

    private Reply<byte[]> setIfAbsentGet(LockKey key, String token, byte[] value, long ttlMillis, long deadline) {
        return retryingClusterRefusals(deadline,
                () -> transport.setIfAbsentGet(key, token, value, ttlMillis, deadline));
    }

    /**
     * Sends again, until the deadline, what a Cluster refused for the moment
     * ({@link LockCommandErrors#isClusterRefusal}: {@code TRYAGAIN},
     * {@code CLUSTERDOWN}), which neither driver retries. Every lock command is
     * idempotent for its token, so a retry is always safe. The pauses double from 5 ms to
     * 100 ms, and wait through interrupts.
     */
    static <T> T retryingClusterRefusals(long deadline, Supplier<T> call) {
        long pauseNanos = FIRST_RETRY_PAUSE_NANOS;
        while (true) {
            try {
                return call.get();
            }
            catch (RuntimeException ex) {
                if (!LockCommandErrors.isClusterRefusal(ex) || deadline - System.nanoTime() < pauseNanos) {
                    throw ex;
                }
                parkUninterruptibly(pauseNanos);
                pauseNanos = Math.min(pauseNanos * 2, MAX_RETRY_PAUSE_NANOS);
            }
        }
    }

    private static void parkUninterruptibly(long nanos) {
        long deadline = System.nanoTime() + nanos;
        long left = nanos;
        while (left > 0) {
            LockSupport.parkNanos(left);
            left = deadline - System.nanoTime();
        }
    }

    // ------------------------------------------------------------------------------------------------
    // wire format

    /**
     * The lock, its fencing counter, its wait queue and its waiters' entries: one Cluster
     * slot.
     */
    static byte[][] keys(LockKey key) {
        String lock = key.storeKey();
        return new byte[][] { bytes(lock), bytes(lock + FENCE_SUFFIX), bytes(lock + QUEUE_SUFFIX),
                bytes(lock + WAITING_SUFFIX) };
    }

    /** The lock and, with {@code line}, its Redlock wake-up line on this node. */
    private static byte[][] redlockKeys(LockKey key, boolean line) {
        String lock = key.storeKey();
        if (!line) {
            return new byte[][] { bytes(lock) };
        }
        return new byte[][] { bytes(lock), bytes(lock + REDLOCK_LINE_SUFFIX), bytes(lock + REDLOCK_ALIVE_SUFFIX) };
    }

    private static byte[][] acquireArguments(String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        return new byte[][] { bytes(token), bytes(Long.toString(ttlMillis)), counterLifetime(ttlMillis),
                bytes(Long.toString(queueMillis)), queued ? YES : NO, fencingToken ? YES : NO };
    }

    /**
     * release.lua's arguments: the token, the channels to publish a hand-over on, the
     * counter's lifetime.
     */
    private byte[][] releaseArguments(LockKey key, String token) {
        return handOverChannels.apply(key).releaseArguments(bytes(token), FENCE_COUNTER_TTL_BYTES);
    }

    private static byte[][] voteArguments(String token, long ttlMillis) {
        return new byte[][] { bytes(token), bytes(Long.toString(ttlMillis)) };
    }

    private static byte[][] redlockAcquireArguments(String token, long ttlMillis, String waiterId, long aliveMillis) {
        return new byte[][] { bytes(token), bytes(Long.toString(ttlMillis)), bytes(waiterId),
                bytes(Long.toString(aliveMillis)) };
    }

    private static byte[][] redlockReleaseArguments(String token, String channel, String hint) {
        return channel == null ? new byte[][] { bytes(token) }
                : new byte[][] { bytes(token), bytes(channel), bytes(hint) };
    }

    /** The fencing counter's expiry: a day, or the lease if that is longer. */
    private static byte[] counterLifetime(long ttlMillis) {
        return ttlMillis > LockScripts.FENCE_COUNTER_TTL_MILLIS ? bytes(Long.toString(ttlMillis))
                : FENCE_COUNTER_TTL_BYTES;
    }

    // ------------------------------------------------------------------------------------------------
    // replies

    /**
     * {@code SET NX GET}'s answer: nothing there before, or our own token (a re-send),
     * means ours.
     */
    private static AcquireResult setResult(byte[] previous, byte[] value, long ttlMillis) {
        return previous == null || Arrays.equals(previous, value) ? AcquireResult.acquired(0, ttlMillis)
                : AcquireResult.notAcquired(0, 0);
    }

    /**
     * What the acquire script's array answer says: {@code {acquired, fencing token or
     * holder's, lease left}}.
     */
    private static AcquireResult acquireResult(List<Object> reply) {
        if ((Long) reply.get(0) == 1L) {
            return AcquireResult.acquired((Long) reply.get(1), (Long) reply.get(2));
        }
        return AcquireResult.notAcquired((Long) reply.get(1), (Long) reply.get(2));
    }

    /**
     * A Redlock vote's reply, {@code {granted, seconds, microseconds}}: granted 1 is the
     * whole lease; the node's clock goes to the incarnation's listener before the vote is
     * counted.
     */
    private AcquireResult voteResult(List<Object> reply, long sentNanos, long receivedNanos, long ttlMillis) {
        if (incarnation != null) {
            incarnation.serverClock().serverTime(sentNanos, receivedNanos, serverMicros(reply, 1));
        }
        return (Long) reply.get(0) == 1L ? AcquireResult.acquired(0, ttlMillis) : AcquireResult.notAcquired(0, 0);
    }

    /** The node's clock in a reply, as {@code TIME} gave it at {@code at} and after. */
    private static long serverMicros(List<Object> reply, int at) {
        return (Long) reply.get(at) * 1_000_000L + (Long) reply.get(at + 1);
    }

    static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

}
