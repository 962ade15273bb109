package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.Objects;

/**
 * A failover without Sentinel that loses exactly the writes a test chooses: the replica
 * is cut off from its master at a known point, the master acknowledges more writes, then
 * dies, and the replica is promoted without them. This is the failure that replica
 * acknowledgements ({@code WAIT n}) exist for, made deterministic.
 *
 * <p>
 * The sequence that shows "the master acknowledged a lock, died before the replica had
 * it, the replica was promoted, and a second client takes the same lock":
 *
 * <pre>{@code
 * try (RedisTestServer master = RedisTestServer.start();
 *      RedisTestServer replica = RedisTestServer.startReplicaOf(master)) {
 *     ReplicaFailover failover = ReplicaFailover.of(master, replica);
 *
 *     failover.cutReplication();            // 1. the replica has everything so far, then is frozen and unlinked
 *     try (RespConnection first = master.openConnection()) {
 *         first.command("SET", "lock:{order-42}", "token-a", "NX", "PX", "30000");  // 2. "OK" from the master
 *         first.command("WAIT", "1", "100");                                         //    0: no replica has it
 *     }
 *     failover.killMasterAndPromoteReplica(); // 3. SIGKILL the master, SIGCONT the replica, REPLICAOF NO ONE
 *     replica.command("SET", "lock:{order-42}", "token-b", "NX", "PX", "30000");      // 4. "OK" again: two holders
 * }
 * }</pre>
 *
 * <p>
 * Why pausing the replica alone is not enough: the master keeps writing to the stopped
 * replica's connection and the kernel buffers those bytes in the replica's socket.
 * Whether they survive is then up to timing: usually the replica applies them on
 * {@code SIGCONT} before it notices that its master is gone, so the "lost" write is not
 * lost, but if the master's death resets the connection they are dropped. Closing the
 * link from the master's side while the replica is stopped (so it cannot reconnect) keeps
 * every later write inside the master process, where {@code SIGKILL} destroys it, every
 * time. A {@code WAIT} issued in step 2 returns 0 whatever its timeout, because the
 * master no longer has a replica to ask.
 */
public final class ReplicaFailover {

    /**
     * How long {@link #cutReplication()} waits for the replica to apply what the master
     * already has.
     */
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(10);

    private final RedisTestServer master;

    private final RedisTestServer replica;

    private ReplicaFailover(RedisTestServer master, RedisTestServer replica) {
        this.master = master;
        this.replica = replica;
    }

    /**
     * Prepares a failover from {@code master} to {@code replica}; nothing happens until
     * the steps are called.
     *
     * <pre>{@code
     * ReplicaFailover failover = ReplicaFailover.of(master, RedisTestServer.startReplicaOf(master));
     * }</pre>
     * @param master a running master
     * @param replica a running replica of {@code master} whose link is up
     * @return the failover
     * @throws IllegalArgumentException when {@code replica} does not replicate from
     * {@code master}
     */
    public static ReplicaFailover of(RedisTestServer master, RedisTestServer replica) {
        Objects.requireNonNull(master, "master");
        Objects.requireNonNull(replica, "replica");
        String role = replica.infoValue("replication", "role");
        String masterPort = replica.infoValue("replication", "master_port");
        if (!"slave".equals(role) || !Integer.toString(master.port()).equals(masterPort)) {
            throw new IllegalArgumentException(replica + " is not a replica of " + master + " (role:" + role
                    + ", master_port:" + masterPort + "); start it with RedisTestServer.startReplicaOf(master)");
        }
        return new ReplicaFailover(master, replica);
    }

    /**
     * The server that acknowledges writes the replica never sees, and is killed by
     * {@link #killMasterAndPromoteReplica()}.
     * @return the master passed to {@link #of}
     */
    public RedisTestServer master() {
        return master;
    }

    /**
     * The server that is promoted by {@link #killMasterAndPromoteReplica()}.
     * @return the replica passed to {@link #of}
     */
    public RedisTestServer replica() {
        return replica;
    }

    /**
     * Step 1: waits until the replica has applied everything the master has written so
     * far, then freezes it ({@link RedisTestServer#pause()}, {@code SIGSTOP}) and closes
     * the master's connection to it ({@link RedisTestServer#disconnectReplicas()}). From
     * here on the master acknowledges writes (and {@code WAIT} returns 0) while the
     * replica's data stays exactly as it was.
     *
     * <pre>{@code
     * master.set("before", "1");
     * failover.cutReplication();
     * master.set("after", "1");     // will be lost
     * }</pre>
     * @throws IllegalStateException when the replica does not catch up, or the master
     * still lists it afterwards
     */
    public void cutReplication() {
        replica.awaitCaughtUpWith(master, CATCH_UP_TIMEOUT);
        replica.pause();
        master.disconnectReplicas();
        if (master.replicaAckOffsets().containsKey(replica.port())) {
            throw new IllegalStateException(
                    master + " still lists " + replica + " as a connected replica after " + "CLIENT KILL TYPE replica");
        }
    }

    /**
     * Steps 3 and 4: kills the master with {@code SIGKILL}, resumes the replica and
     * promotes it with {@code REPLICAOF NO ONE}. In this order on purpose: a replica
     * resumed while its master still runs would reconnect and fetch the writes that
     * should be lost. Afterwards the replica is a master holding what it had at
     * {@link #cutReplication()}, and the killed master can be restarted (empty) if a test
     * needs it again.
     *
     * <pre>{@code
     * failover.killMasterAndPromoteReplica();
     * assertThat(failover.replica().get("after")).isNull();
     * }</pre>
     */
    public void killMasterAndPromoteReplica() {
        master.kill();
        replica.resume();
        replica.promoteToMaster();
    }

    /**
     * Both servers, for assertion messages.
     * @return e.g.
     * {@code ReplicaFailover[master=RedisTestServer[...], replica=RedisTestServer[...]]}
     */
    @Override
    public String toString() {
        return "ReplicaFailover[master=" + master + ", replica=" + replica + "]";
    }

}
