package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.LockConnection.Open;
import io.github.distlock.redis.RedisLockTransport.Acknowledged;
import io.github.distlock.redis.RedisLockTransport.RenewalCall;
import io.github.distlock.redis.RedisLockTransport.RenewalReplies;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.ArrayOutput;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandKeyword;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ConnectionIntent;

/**
 * The I/O of replica acknowledgements on the Lettuce connection
 * ({@link LettuceTransport#renewAndWait}, {@link LettuceTransport#renew}); what the
 * answers mean is {@link RedisLockProtocol}'s.
 *
 * <p>
 * A confirmation is one pipelined burst on the connection to the lock's master:
 * {@code CLIENT ID}, the renewal calls, {@code WAIT n timeout}, {@code CLIENT ID}.
 * {@code WAIT} counts only the writes of the server-side connection it runs on, and
 * Lettuce reconnects and re-sends by itself: a {@code WAIT} that ended up on a fresh
 * connection after the write would count nothing of ours and answer with every connected
 * replica. Equal ids before and after prove that the write and the {@code WAIT} ran on
 * one server connection, in order; a re-sent renewal does no harm, since it writes again
 * ({@code PEXPIRE}) on the connection it runs on. Unequal ids make the count unknown
 * ({@code -1}).
 *
 * <p>
 * In a Cluster the burst goes to the node connection of the master that serves the lock's
 * slot ({@code getConnectionAsync(host, port, WRITE)}): a {@code WAIT} routed by the
 * cluster connection, having no key, would go to any node. Because the confirming write
 * travels in the same burst, it does not matter which node connection wrote the lock
 * first. {@code renew.lua} runs with {@code EVAL}, not {@code EVALSHA}: the script is a
 * few hundred bytes, and a node that lacks it in its cache ({@code NOSCRIPT}) would break
 * the burst's order.
 */
final class LettuceReplicaConfirmation {

    private static final byte[] RENEW_SOURCE = LockScripts.RENEW.sourceBytes();

    /**
     * How often one confirmation follows a {@code MOVED} before it gives up (a failover
     * moves a slot once).
     */
    private static final int MAX_REDIRECTS = 2;

    private static final String OPERATION = "replica acknowledgement";

    private final LockConnection connection;

    LettuceReplicaConfirmation(LockConnection connection) {
        this.connection = connection;
    }

    /** See {@link RedisLockTransport#renewAndWait}. */
    Acknowledged renewAndWait(LockKey key, byte[][] keys, byte[][] args, ReplicaAcks acks, long deadline) {
        Open open = connection.open(key, OPERATION, deadline);
        StatefulConnection<byte[], byte[]> node = masterConnection(open, key, deadline);
        for (int redirects = 0;; redirects++) {
            Burst burst = send(node, List.of(renewalArgs(keys, args)), acks);
            try {
                LockConnection.awaitUninterruptibly(burst.all(), deadline);
            }
            catch (TimeoutException ex) {
                burst.cancel();
                throw LockCommandErrors.noAnswer(key, OPERATION, LockCommandErrors
                    .confirmationBound(connection.timeoutProperty(), connection.operationTimeout(), acks), ex);
            }
            catch (ExecutionException ex) {
                // Sent straight to a node, the confirmation is not redirected by Lettuce:
                // after a
                // failover the old master answers MOVED. Follow it to the new master; the
                // renewal is
                // a compare-and-extend, so sending it again is harmless.
                String target = movedTarget(ex.getCause());
                if (target != null && redirects < MAX_REDIRECTS
                        && open.stateful() instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster) {
                    refreshPartitions(open);
                    int colon = target.lastIndexOf(':');
                    node = nodeConnection(cluster, target.substring(0, colon),
                            Integer.parseInt(target.substring(colon + 1)), key, deadline);
                    continue;
                }
                if (isMoved(ex.getCause())) {
                    refreshPartitions(open);
                }
                throw LockCommandErrors.failed(key, OPERATION, ex.getCause(), connection.credentials());
            }
            return new Acknowledged(burst.renewals().get(0).join(), replicas(burst));
        }
    }

    /**
     * The {@code host:port} a {@code MOVED} error names, or {@code null} for any other
     * error.
     */
    private static String movedTarget(Throwable cause) {
        String message = cause == null ? null : cause.getMessage();
        if (message == null || !message.startsWith("MOVED ")) {
            return null;
        }
        String[] parts = message.trim().split(" ");
        return parts.length >= 3 ? parts[2] : null;
    }

    /**
     * The node connection Lettuce keeps for the master at {@code host:port}, which ran
     * the lock's writes.
     */
    private static StatefulConnection<byte[], byte[]> nodeConnection(
            StatefulRedisClusterConnection<byte[], byte[]> cluster, String host, int port, LockKey key, long deadline) {
        try {
            return LockConnection.awaitUninterruptibly(cluster.getConnectionAsync(host, port, ConnectionIntent.WRITE),
                    deadline);
        }
        catch (TimeoutException | ExecutionException ex) {
            throw new LockBackendException(key.name(), "Could not reach the Redis Cluster master " + host + ":" + port
                    + " of lock " + key.printableName() + " to confirm it with its replicas", ex);
        }
    }

    /**
     * Sends each master's renewal calls in one burst with one {@code WAIT}, the bursts
     * side by side, and reports each call with its burst's count as the burst completes.
     * A group whose master cannot be reached, or whose burst does not complete by
     * {@code deadline}, is reported unanswered.
     */
    void renew(List<List<RenewalCall>> groups, ReplicaAcks acks, long deadline, RenewalReplies replies) {
        Open open;
        try {
            open = connection.open(groups.get(0).get(0).key(), "renewal", deadline);
        }
        catch (LockBackendException ex) {
            groups.forEach(group -> group.forEach(call -> replies.answered(call, null, -1)));
            return;
        }
        List<Burst> bursts = new ArrayList<>(groups.size());
        BlockingQueue<Integer> completed = new LinkedBlockingQueue<>();
        for (int g = 0; g < groups.size(); g++) {
            Burst burst = null;
            try {
                List<RenewalCall> group = groups.get(g);
                StatefulConnection<byte[], byte[]> node = masterConnection(open, group.get(0).key(), deadline);
                List<CommandArgs<byte[], byte[]>> calls = new ArrayList<>(group.size());
                for (RenewalCall call : group) {
                    calls.add(renewalArgs(call.keys(), call.args()));
                }
                burst = send(node, calls, acks);
                int index = g;
                burst.all().whenComplete((done, failure) -> completed.add(index));
            }
            catch (LockBackendException ex) {
                completed.add(g);
            }
            bursts.add(burst);
        }
        boolean interrupted = false;
        int pending = groups.size();
        boolean[] reported = new boolean[groups.size()];
        while (pending > 0) {
            Integer group;
            try {
                long left = deadline - System.nanoTime();
                group = left > 0 ? completed.poll(left, TimeUnit.NANOSECONDS) : null;
            }
            catch (InterruptedException ex) {
                interrupted = true;
                continue;
            }
            if (group == null) {
                break;
            }
            reported[group] = true;
            pending--;
            report(open, groups.get(group), bursts.get(group), replies);
        }
        for (int g = 0; g < groups.size(); g++) {
            if (!reported[g]) {
                if (bursts.get(g) != null) {
                    bursts.get(g).cancel();
                }
                groups.get(g).forEach(call -> replies.answered(call, null, -1));
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** One master's calls, once its burst is complete (or could not be sent). */
    private static void report(Open open, List<RenewalCall> group, Burst burst, RenewalReplies replies) {
        long replicas = burst == null ? -1 : replicas(burst);
        for (int c = 0; c < group.size(); c++) {
            List<Object> answers = null;
            if (burst != null) {
                AsyncCommand<byte[], byte[], List<Object>> call = burst.renewals().get(c);
                if (succeeded(call)) {
                    answers = call.join();
                }
                else if (call.isCompletedExceptionally()) {
                    refreshIfMoved(open, call);
                }
            }
            replies.answered(group.get(c), answers, replicas);
        }
    }

    /**
     * What {@code WAIT} answered, if it ran on the connection that made the renewals;
     * {@code -1} if not known.
     */
    private static long replicas(Burst burst) {
        if (!succeeded(burst.firstId()) || !succeeded(burst.acks()) || !succeeded(burst.lastId())
                || !burst.firstId().join().equals(burst.lastId().join())) {
            return -1;
        }
        return burst.acks().join();
    }

    private static boolean succeeded(CompletableFuture<?> command) {
        return command.isDone() && !command.isCompletedExceptionally();
    }

    /** Which master a key's confirmation goes to: "" outside a Cluster. */
    static String masterOf(Open open, LockKey key) {
        if (open.stateful() instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster) {
            RedisClusterNode master = cluster.getPartitions().getMasterBySlot(slot(key));
            return master == null ? "?" : master.getUri().getHost() + ":" + master.getUri().getPort();
        }
        return "";
    }

    /**
     * The connection to the master of {@code key}: ours outside a Cluster; in a Cluster,
     * the node connection that Lettuce keeps for that master.
     */
    private static StatefulConnection<byte[], byte[]> masterConnection(Open open, LockKey key, long deadline) {
        if (!(open.stateful() instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster)) {
            return open.stateful();
        }
        RedisClusterNode master = cluster.getPartitions().getMasterBySlot(slot(key));
        if (master == null) {
            throw new LockBackendException(key.name(), "No Redis Cluster master is known for the slot of lock "
                    + key.printableName() + " (" + key.printableStoreKey() + "), so its replicas cannot be asked",
                    null);
        }
        return nodeConnection(cluster, master.getUri().getHost(), master.getUri().getPort(), key, deadline);
    }

    private static int slot(LockKey key) {
        return SlotHash.getSlot(key.storeKey().getBytes(StandardCharsets.UTF_8));
    }

    private static void refreshIfMoved(Open open, AsyncCommand<byte[], byte[], List<Object>> call) {
        try {
            call.join();
        }
        catch (RuntimeException ex) {
            if (isMoved(ex.getCause())) {
                refreshPartitions(open);
            }
        }
    }

    /**
     * A slot that moved: sent straight to a node, the command is not redirected, so learn
     * the new map.
     */
    private static boolean isMoved(Throwable cause) {
        String message = cause == null ? null : cause.getMessage();
        return message != null && (message.startsWith("MOVED") || message.startsWith("ASK"));
    }

    private static void refreshPartitions(Open open) {
        if (open.client() instanceof RedisClusterClient cluster) {
            cluster.refreshPartitionsAsync();
        }
    }

    private static CommandArgs<byte[], byte[]> renewalArgs(byte[][] keys, byte[][] args) {
        return new CommandArgs<>(ByteArrayCodec.INSTANCE).add(RENEW_SOURCE)
            .add(keys.length)
            .addKeys(keys)
            .addValues(args);
    }

    /**
     * Sends {@code CLIENT ID}, the renewals, {@code WAIT}, {@code CLIENT ID}, without
     * waiting in between.
     */
    private static Burst send(StatefulConnection<byte[], byte[]> node, List<CommandArgs<byte[], byte[]>> renewals,
            ReplicaAcks acks) {
        AsyncCommand<byte[], byte[], Long> firstId = dispatch(node, CommandType.CLIENT,
                new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                new CommandArgs<>(ByteArrayCodec.INSTANCE).add(CommandKeyword.ID));
        List<AsyncCommand<byte[], byte[], List<Object>>> sent = new ArrayList<>(renewals.size());
        for (CommandArgs<byte[], byte[]> args : renewals) {
            sent.add(dispatch(node, CommandType.EVAL, new ArrayOutput<>(ByteArrayCodec.INSTANCE), args));
        }
        AsyncCommand<byte[], byte[], Long> waited = dispatch(node, CommandType.WAIT,
                new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                new CommandArgs<>(ByteArrayCodec.INSTANCE).add(acks.replicasArgument()).add(acks.timeoutArgument()));
        AsyncCommand<byte[], byte[], Long> lastId = dispatch(node, CommandType.CLIENT,
                new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                new CommandArgs<>(ByteArrayCodec.INSTANCE).add(CommandKeyword.ID));
        return new Burst(firstId, sent, waited, lastId);
    }

    private static <T> AsyncCommand<byte[], byte[], T> dispatch(StatefulConnection<byte[], byte[]> node,
            CommandType type, CommandOutput<byte[], byte[], T> output, CommandArgs<byte[], byte[]> args) {
        AsyncCommand<byte[], byte[], T> command = new AsyncCommand<>(new Command<>(type, output, args));
        node.dispatch(command);
        return command;
    }

    /** The commands of one confirmation, in the order they were sent. */
    private record Burst(AsyncCommand<byte[], byte[], Long> firstId,
            List<AsyncCommand<byte[], byte[], List<Object>>> renewals, AsyncCommand<byte[], byte[], Long> acks,
            AsyncCommand<byte[], byte[], Long> lastId) {

        CompletableFuture<Void> all() {
            List<CompletableFuture<?>> every = new ArrayList<>(renewals);
            every.add(firstId);
            every.add(acks);
            every.add(lastId);
            return CompletableFuture.allOf(every.toArray(CompletableFuture[]::new));
        }

        void cancel() {
            firstId.cancel(false);
            renewals.forEach(call -> call.cancel(false));
            acks.cancel(false);
            lastId.cancel(false);
        }
    }

}
