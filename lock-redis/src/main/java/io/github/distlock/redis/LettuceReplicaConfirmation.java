package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.LockBackend.LeaseRenewal;
import io.github.distlock.core.LockBackend.RenewalOutcome;
import io.github.distlock.core.LockBackend.RenewalOutcomes;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.LockConnection.Open;
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
 * Replica acknowledgements on {@link RedisLockBackend}'s Lettuce connection ({@link ReplicaAcks}).
 *
 * <p>A confirmation is one pipelined burst on the connection to the lock's master:
 * {@code CLIENT ID}, {@code renew.lua} (compare-and-{@code PEXPIRE}: a write of the lock that follows its
 * acquisition or hand-over in the replication stream), {@code WAIT n timeout}, {@code CLIENT ID}.
 * {@code WAIT} counts only the writes of the server-side connection it runs on, and Lettuce reconnects
 * and re-sends by itself: a {@code WAIT} that ended up on a fresh connection after the write would count
 * nothing of ours and answer with every connected replica. Equal ids before and after prove that the
 * write and the {@code WAIT} ran on one server connection, in order; a re-sent {@code renew.lua} does no
 * harm, since it writes again ({@code PEXPIRE}) on the connection it runs on. Unequal ids make the count
 * unknown, which fails the call like any unanswered command.
 *
 * <p>In a Cluster the burst goes to the node connection of the master that serves the lock's slot
 * ({@code getConnectionAsync(host, port, WRITE)}): a {@code WAIT} routed by the cluster connection,
 * having no key, would go to any node. Because the confirming write travels in the same burst, it does
 * not matter which node connection wrote the lock first. {@code renew.lua} runs with {@code EVAL}, not
 * {@code EVALSHA}: the script is a few hundred bytes, and a node that lacks it in its cache ({@code NOSCRIPT})
 * would break the burst's order.
 */
final class LettuceReplicaConfirmation {

    private static final byte[] RENEW_SOURCE = LockScripts.RENEW.sourceBytes();

    /** How often one confirmation follows a {@code MOVED} before it gives up (a failover moves a slot once). */
    private static final int MAX_REDIRECTS = 2;

    private final LockConnection connection;
    private final ReplicaAcks acks;
    private final long timeoutNanos;

    LettuceReplicaConfirmation(LockConnection connection, ReplicaAcks acks) {
        this.connection = connection;
        this.acks = acks;
        this.timeoutNanos = acks.timeout().toNanos();
    }

    /** The bound of one confirmation: an operation timeout for the network, plus what {@code WAIT} may block. */
    private long deadline() {
        return connection.deadline() + timeoutNanos;
    }

    /**
     * Writes the lock again ({@code renew.lua} with {@code ttlMillis}) and waits for the replicas.
     *
     * @return {@code true} if the lock holds {@code token} and enough replicas have it; {@code false} if
     *         it no longer holds {@code token} (nothing was written, nothing to wait for)
     * @throws io.github.distlock.ReplicaAcknowledgementException if too few replicas confirmed it in time
     * @throws LockBackendException if Redis failed or did not answer, or the count cannot be trusted
     */
    boolean confirm(LockKey key, String token, long ttlMillis) {
        long deadline = deadline();
        Open open = connection.open(key, "replica acknowledgement", deadline);
        StatefulConnection<byte[], byte[]> node = masterConnection(open, key, deadline);
        for (int redirects = 0;; redirects++) {
            Burst burst = send(node, List.of(renewalArgs(List.of(new LeaseRenewal(key, token, ttlMillis)))));
            try {
                LockConnection.awaitUninterruptibly(burst.all(), deadline);
            }
            catch (TimeoutException ex) {
                burst.cancel();
                throw new LockBackendException(key.name(), "Redis did not confirm lock " + key.printableName() + " ("
                        + key.printableStoreKey() + ") with WAIT within distributed-lock.operation-timeout="
                        + connection.operationTimeout() + " plus distributed-lock.replica-ack-timeout="
                        + acks.timeout() + ". Is Redis reachable?", ex);
            }
            catch (ExecutionException ex) {
                // Sent straight to a node, the confirmation is not redirected by Lettuce: after a
                // failover the old master answers MOVED. Follow it to the new master; the renewal is
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
                throw failed(open, key, ex.getCause());
            }
            if ((Long) burst.renewals().get(0).join().get(0) != 1L) {
                return false;
            }
            requireOneConnection(key, burst);
            acks.require(key, burst.acks().join());
            return true;
        }
    }

    /** The {@code host:port} a {@code MOVED} error names, or {@code null} for any other error. */
    private static String movedTarget(Throwable cause) {
        String message = cause == null ? null : cause.getMessage();
        if (message == null || !message.startsWith("MOVED ")) {
            return null;
        }
        String[] parts = message.trim().split(" ");
        return parts.length >= 3 ? parts[2] : null;
    }

    /** The node connection Lettuce keeps for the master at {@code host:port}, which ran the lock's writes. */
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
     * Renews every lease and confirms the renewals of each master with one {@code WAIT}. A lease whose
     * renewal is not confirmed by enough replicas is reported {@link RenewalOutcome#FAILED}: extended on
     * the master, but not as far as a replica promoted now would know, so its handle keeps its old
     * deadline and the watchdog tries again. {@code LOST} stays lost: that answer comes from the master.
     */
    void renew(List<LeaseRenewal> renewals, List<List<Integer>> batches, RenewalOutcomes outcomes) {
        long deadline = deadline();
        Open open;
        try {
            open = connection.open(renewals.get(0).key(), "renewal", deadline);
        }
        catch (LockBackendException ex) {
            reportFailed(renewals.size(), outcomes);
            return;
        }
        Map<String, List<Integer>> byMaster = new LinkedHashMap<>();
        for (int b = 0; b < batches.size(); b++) {
            byMaster.computeIfAbsent(masterOf(open, renewals.get(batches.get(b).get(0)).key()),
                    m -> new ArrayList<>()).add(b);
        }
        List<List<Integer>> groups = new ArrayList<>(byMaster.values());
        List<Burst> bursts = new ArrayList<>(groups.size());
        BlockingQueue<Integer> completed = new LinkedBlockingQueue<>();
        for (int g = 0; g < groups.size(); g++) {
            Burst burst = null;
            try {
                LockKey key = renewals.get(batches.get(groups.get(g).get(0)).get(0)).key();
                StatefulConnection<byte[], byte[]> node = masterConnection(open, key, deadline);
                List<CommandArgs<byte[], byte[]>> calls = new ArrayList<>();
                for (int b : groups.get(g)) {
                    calls.add(renewalArgs(batches.get(b).stream().map(renewals::get).toList()));
                }
                burst = send(node, calls);
                int group = g;
                burst.all().whenComplete((done, failure) -> completed.add(group));
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
            report(open, renewals, batches, groups.get(group), bursts.get(group), outcomes);
        }
        for (int g = 0; g < groups.size(); g++) {
            if (!reported[g]) {
                if (bursts.get(g) != null) {
                    bursts.get(g).cancel();
                }
                for (int b : groups.get(g)) {
                    batches.get(b).forEach(index -> outcomes.outcome(index, RenewalOutcome.FAILED));
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The outcomes of one master's renewals, once its burst is complete (or could not be sent). */
    private void report(Open open, List<LeaseRenewal> renewals, List<List<Integer>> batches, List<Integer> group,
            Burst burst, RenewalOutcomes outcomes) {
        // Confirmed: WAIT answered with enough replicas, on the connection that ran the renewals.
        boolean confirmed = burst != null && succeeded(burst.firstId()) && succeeded(burst.acks())
                && succeeded(burst.lastId()) && burst.firstId().join().equals(burst.lastId().join())
                && acks.satisfiedBy(burst.acks().join());
        for (int c = 0; c < group.size(); c++) {
            List<Integer> batch = batches.get(group.get(c));
            List<Object> result = null;
            if (burst != null) {
                AsyncCommand<byte[], byte[], List<Object>> call = burst.renewals().get(c);
                if (call.isDone() && !call.isCompletedExceptionally()) {
                    result = call.join();
                }
                else if (call.isCompletedExceptionally()) {
                    refreshIfMoved(open, call);
                }
            }
            for (int i = 0; i < batch.size(); i++) {
                RenewalOutcome outcome;
                if (result == null) {
                    outcome = RenewalOutcome.FAILED;
                }
                else if ((Long) result.get(i) != 1L) {
                    outcome = RenewalOutcome.LOST;
                }
                else {
                    outcome = confirmed ? RenewalOutcome.RENEWED : RenewalOutcome.FAILED;
                }
                outcomes.outcome(batch.get(i), outcome);
            }
        }
    }

    private static boolean succeeded(CompletableFuture<?> command) {
        return command.isDone() && !command.isCompletedExceptionally();
    }

    private static void reportFailed(int count, RenewalOutcomes outcomes) {
        for (int i = 0; i < count; i++) {
            outcomes.outcome(i, RenewalOutcome.FAILED);
        }
    }

    private static void requireOneConnection(LockKey key, Burst burst) {
        if (!burst.firstId().join().equals(burst.lastId().join())) {
            throw new LockBackendException(key.name(), "The connection to Redis was re-established while lock "
                    + key.printableName() + " was being confirmed by its replicas, so WAIT may not have counted "
                    + "its write; the lock is not counted as held.", null);
        }
    }

    /** Which master a key's confirmation goes to: "" outside a Cluster. */
    private static String masterOf(Open open, LockKey key) {
        if (open.stateful() instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster) {
            RedisClusterNode master = cluster.getPartitions().getMasterBySlot(slot(key));
            return master == null ? "?" : master.getUri().getHost() + ":" + master.getUri().getPort();
        }
        return "";
    }

    /**
     * The connection to the master of {@code key}: ours outside a Cluster; in a Cluster, the node
     * connection that Lettuce keeps for that master.
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

    private LockBackendException failed(Open open, LockKey key, Throwable cause) {
        if (isMoved(cause)) {
            refreshPartitions(open);
        }
        return new LockBackendException(key.name(), "Redis failed the replica acknowledgement of lock "
                + key.printableName() + " (" + key.printableStoreKey() + "): " + cause.getMessage(), cause);
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

    /** A slot that moved: sent straight to a node, the command is not redirected, so learn the new map. */
    private static boolean isMoved(Throwable cause) {
        String message = cause == null ? null : cause.getMessage();
        return message != null && (message.startsWith("MOVED") || message.startsWith("ASK"));
    }

    private static void refreshPartitions(Open open) {
        if (open.client() instanceof RedisClusterClient cluster) {
            cluster.refreshPartitionsAsync();
        }
    }

    private static CommandArgs<byte[], byte[]> renewalArgs(List<LeaseRenewal> renewals) {
        CommandArgs<byte[], byte[]> args = new CommandArgs<>(ByteArrayCodec.INSTANCE).add(RENEW_SOURCE)
                .add(renewals.size());
        for (LeaseRenewal renewal : renewals) {
            args.addKey(renewal.key().storeKey().getBytes(StandardCharsets.UTF_8));
        }
        for (LeaseRenewal renewal : renewals) {
            args.add(renewal.token().getBytes(StandardCharsets.UTF_8)).add(renewal.ttlMillis());
        }
        return args;
    }

    /** Sends {@code CLIENT ID}, the renewals, {@code WAIT}, {@code CLIENT ID}, without waiting in between. */
    private Burst send(StatefulConnection<byte[], byte[]> node, List<CommandArgs<byte[], byte[]>> renewals) {
        AsyncCommand<byte[], byte[], Long> firstId = dispatch(node, CommandType.CLIENT,
                new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                new CommandArgs<>(ByteArrayCodec.INSTANCE).add(CommandKeyword.ID));
        List<AsyncCommand<byte[], byte[], List<Object>>> sent = new ArrayList<>(renewals.size());
        for (CommandArgs<byte[], byte[]> args : renewals) {
            sent.add(dispatch(node, CommandType.EVAL, new ArrayOutput<>(ByteArrayCodec.INSTANCE), args));
        }
        AsyncCommand<byte[], byte[], Long> waited = dispatch(node, CommandType.WAIT,
                new IntegerOutput<>(ByteArrayCodec.INSTANCE), new CommandArgs<>(ByteArrayCodec.INSTANCE)
                        .add(acks.replicasArgument()).add(acks.timeoutArgument()));
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
