package io.github.distlock.redis;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.distlock.core.InspectableLockBackend.NodeReachability;
import io.github.distlock.core.LockKey;

/**
 * How {@link RedisLockProtocol}'s commands reach Redis: I/O only. It sends what it is
 * given and hands back what Redis answered; which script, which keys and arguments, and
 * what an answer means for the lock are the protocol's. Two implementations:
 * {@link LettuceTransport} (our own Lettuce connection, pipelined, with non-blocking
 * calls) and {@link SpringDataTransport} (Spring Data Redis's template, for Jedis and any
 * other connection factory).
 *
 * <p>
 * What every implementation guarantees:
 * <ul>
 * <li><b>Bounded.</b> A call returns by its deadline ({@link System#nanoTime}), whatever
 * the client's own timeouts are, and waits through interrupts (the flag is
 * restored).</li>
 * <li><b>Failures are {@link io.github.distlock.LockBackendException}s</b>, worded by
 * {@link LockCommandErrors}; a command that failed or was not answered may have run all
 * the same.</li>
 * <li><b>Re-sent at most after a lost reply, and said so.</b> A command whose reply a
 * broken connection lost is sent again within the deadline ({@link Reply#resent()}): its
 * first delivery may have run. Lettuce does this by itself; the Spring Data transport
 * does it once.</li>
 * <li><b>Scripts by digest</b> ({@code EVALSHA}), and by their source on a node that does
 * not have them yet, except {@linkplain LuaScript#cachedOnly() incarnation scripts},
 * which fail instead.</li>
 * </ul>
 */
interface RedisLockTransport {

    /**
     * What Redis answered.
     *
     * @param value the reply, {@code null} for a nil reply
     * @param resent whether the command was sent more than once (a broken connection lost
     * the reply to an earlier delivery, which may have run)
     */
    record Reply<T>(T value, boolean resent) {
    }

    /** How a script answers: which reply the transport decodes. */
    enum ReplyType {

        /** An integer: {@code Long}. */
        INTEGER,
        /** An array of integers: {@code List<Object>} of {@code Long}. */
        ARRAY

    }

    /**
     * What a command does with its token, for a transport whose commands to one lock may
     * overtake each other (the Spring Data transport sends each on a pooled connection of
     * its own).
     */
    enum Role {

        /**
         * It may take the lock for its token: if its caller gives up while it runs, it
         * may still take it.
         */
        ACQUIRE,
        /**
         * It undoes what an acquire of its token did: it must reach Redis after every
         * such acquire.
         */
        UNDO,
        /** Neither. */
        OTHER

    }

    /** The deadline of one call started now: the operation timeout from now. */
    long deadline();

    /**
     * {@code SET key value NX PX ttlMillis GET}: sets the key if it is free, and answers
     * what it held before.
     * @return the previous value, {@code null} if the key was free
     */
    Reply<byte[]> setIfAbsentGet(LockKey key, String token, byte[] value, long ttlMillis, long deadline);

    /**
     * {@link #setIfAbsentGet} without waiting: the reply completes the future on an I/O
     * thread, which whatever follows must not block.
     * @return {@code null} if it cannot be sent without blocking now: make the blocking
     * call instead
     */
    CompletableFuture<Reply<byte[]>> setIfAbsentGetAsync(LockKey key, byte[] value, long ttlMillis);

    /**
     * Runs {@code script} on {@code keys} (the first routes it in a Cluster) and
     * {@code args}.
     * @param operation what it does, for messages: "acquire", "release", ...
     * @param role what it does with {@code token}
     * @param token the lock value it carries, or {@code null}
     * @return the reply, a {@code Long} or a {@code List<Object>} as {@code type} says
     */
    <T> Reply<T> script(LockKey key, String operation, LuaScript script, ReplyType type, byte[][] keys, byte[][] args,
            Role role, String token, long deadline);

    /**
     * {@link #script} without waiting, as {@link #setIfAbsentGetAsync}.
     * @return {@code null} if it cannot be sent without blocking now
     */
    <T> CompletableFuture<Reply<T>> scriptAsync(LockKey key, String operation, LuaScript script, ReplyType type,
            byte[][] keys, byte[][] args);

    /**
     * {@code renew.lua} on {@code keys} by {@code EVAL}, then {@code WAIT}, on one server
     * connection: {@code WAIT} counts only the writes of the connection it runs on.
     * @return each key's renewal answer, and how many replicas acknowledged; {@code -1}
     * if that count cannot be trusted (the connection changed between the write and
     * {@code WAIT}); no {@code WAIT} is sent, and the count is 0, if nothing was renewed
     */
    Acknowledged renewAndWait(LockKey key, byte[][] keys, byte[][] args, ReplicaAcks acks, long deadline);

    /**
     * Where renewals go, for grouping them into calls: whether the connection goes to a
     * Cluster (one script call per slot) and which master serves a key.
     * @return {@code null} if that is not known by {@code deadline}: the round's renewals
     * then fail
     */
    RenewalTopology renewalTopology(long deadline);

    /**
     * Sends a round of renewal calls, each master's calls (by
     * {@link RenewalTopology#masterOf}) as that master's group (a Cluster master that
     * stopped answering holds up only its own), and with {@code acks} enabled each
     * group's renewals confirmed by {@code WAIT} on the connection that made them. Tells
     * {@code replies} of every call exactly once, on the calling thread, by
     * {@code deadline} at the latest.
     */
    void renew(LuaScript script, Map<String, List<RenewalCall>> callsByMaster, ReplicaAcks acks, long deadline,
            RenewalReplies replies);

    /**
     * Pings the deployment for the health check: the node (or Sentinel master) once, and
     * in a Cluster every master that serves slots. Never throws: a failure is the answer,
     * in plain words.
     * @param name what to call the deployment when it is not a Cluster, for example
     * {@code 127.0.0.1:6379}
     */
    List<NodeReachability> pingEachMaster(String name);

    /**
     * The answer to {@link #renewAndWait}.
     *
     * @param renewed renew.lua's answer, one {@code Long} per key: 1 renewed, 0 not ours
     * @param replicas how many replicas acknowledged, or {@code -1} if unknown
     */
    record Acknowledged(List<Object> renewed, long replicas) {
    }

    /** See {@link #renewalTopology}. */
    interface RenewalTopology {

        /** Whether one script call may only touch keys of one slot. */
        boolean cluster();

        /**
         * The master that serves {@code key}, as {@code host:port}; one string for every
         * key outside a Cluster.
         */
        String masterOf(LockKey key);

    }

    /**
     * One renewal script call.
     *
     * @param leases the renewals it makes, as indexes into the round's list
     * @param key the first lease's lock, for routing and messages
     * @param keys the locks' keys
     * @param args each lock's token and lease, in the order of {@code keys}
     */
    record RenewalCall(List<Integer> leases, LockKey key, byte[][] keys, byte[][] args) {
    }

    /** What a round of renewal calls answered. */
    interface RenewalReplies {

        /**
         * @param answers renew.lua's answer, one {@code Long} per lease of the call, or
         * {@code null} if the call failed or was not answered in time
         * @param replicas how many replicas acknowledged its group's renewals, {@code -1}
         * if unknown or not asked
         */
        void answered(RenewalCall call, List<Object> answers, long replicas);

    }

}
