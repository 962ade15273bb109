package io.github.distlock.testsupport;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * A small Redis Cluster (3 masters by default), each node a {@link RedisTestServer} in
 * cluster mode, with the 16384 hash slots split evenly over the masters and all nodes
 * agreeing on {@code cluster_state:ok} before {@link #start()} returns.
 *
 * <p>
 * Why: lock keys must hash to one slot together with anything a script touches, and a
 * client must follow {@code MOVED} redirects; only a real cluster shows whether that
 * holds. By default there are no replicas, so killing a node takes its slots away (after
 * the node timeout of {@value #NODE_TIMEOUT_MILLIS} ms the cluster reports {@code fail})
 * and {@link RedisTestServer#restart()} brings them back, as the node keeps its identity
 * in {@code nodes.conf}.
 *
 * <p>
 * With replicas ({@link #start(int, int)}), {@link #failover(RedisTestServer)} moves a
 * master's slots to its replica with {@code CLUSTER FAILOVER}, the way an operator does
 * before maintenance:
 *
 * <pre>{@code
 * try (RedisTestCluster cluster = RedisTestCluster.start(3, 1)) {
 *     RedisTestServer owner = cluster.nodeForKey("lock:{order-42}");
 *     RedisTestServer promoted = cluster.failover(owner);   // now cluster.nodeForKey(...) == promoted
 * }
 * }</pre>
 *
 * <p>
 * Slots are assigned with {@code CLUSTER ADDSLOTS} in batches, which Redis 6.2
 * understands too.
 */
public final class RedisTestCluster implements AutoCloseable {

    /** Number of hash slots in every Redis Cluster. */
    public static final int SLOT_COUNT = 16_384;

    /**
     * {@code cluster-node-timeout} of the nodes; short, so tests that kill a node see the
     * effect quickly.
     */
    public static final int NODE_TIMEOUT_MILLIS = 2_000;

    private static final int SLOTS_PER_ADDSLOTS_CALL = 1_000;

    private static final Duration FORMATION_TIMEOUT = Duration.ofSeconds(30);

    /** Keys moved per {@code MIGRATE} call by {@link #migrateSlot}. */
    private static final int KEYS_PER_MIGRATE_CALL = 100;

    private static final Duration MIGRATION_TIMEOUT = Duration.ofSeconds(10);

    /**
     * How long {@link #failover(RedisTestServer)} waits for every node to agree on the
     * promoted replica.
     */
    private static final Duration FAILOVER_TIMEOUT = Duration.ofSeconds(30);

    /**
     * Every node: the masters as started first, then the replicas
     * ({@link #start(int, int)}).
     */
    private final List<RedisTestServer> nodes;

    /** How many of {@link #nodes} were started as masters and given slots. */
    private final int masterCount;

    private final int[] firstSlot;

    private final int[] lastSlot;

    /**
     * Index in {@link #nodes} of each slot's owner; changed by {@link #migrateSlot} and
     * {@link #failover}.
     */
    private final int[] slotOwner = new int[SLOT_COUNT];

    /**
     * Index in {@link #nodes} of the master of each slot range, as started; changed by
     * {@link #failover}.
     */
    private final int[] rangeMaster;

    /**
     * Indexes in {@link #nodes} of the nodes that are replicas now; changed by
     * {@link #failover}.
     */
    private final Set<Integer> replicaIndexes = new HashSet<>();

    private boolean closed;

    private RedisTestCluster(List<RedisTestServer> nodes, int masterCount) {
        this.nodes = nodes;
        this.masterCount = masterCount;
        this.firstSlot = new int[masterCount];
        this.lastSlot = new int[masterCount];
        this.rangeMaster = new int[masterCount];
        for (int i = 0; i < masterCount; i++) {
            rangeMaster[i] = i;
            firstSlot[i] = i * SLOT_COUNT / masterCount;
            lastSlot[i] = (i + 1) * SLOT_COUNT / masterCount - 1;
            Arrays.fill(slotOwner, firstSlot[i], lastSlot[i] + 1, i);
        }
        for (int i = masterCount; i < nodes.size(); i++) {
            replicaIndexes.add(i);
        }
    }

    /**
     * Starts a 3-master cluster and waits until every node reports
     * {@code cluster_state:ok}.
     * @return the running cluster; close it when done
     * @throws RedisStartupException when a node does not start
     * @throws IllegalStateException when the cluster does not form in time
     */
    public static RedisTestCluster start() {
        return start(3);
    }

    /**
     * Starts a cluster of {@code masters} masters and waits until every node reports
     * {@code cluster_state:ok}.
     * @param masters number of master nodes, at least 1
     * @return the running cluster; close it when done
     * @throws RedisStartupException when a node does not start
     * @throws IllegalStateException when the cluster does not form in time
     */
    public static RedisTestCluster start(int masters) {
        return start(masters, 0, RedisTestServer.builder());
    }

    /**
     * Starts a cluster of {@code masters} masters of the given {@code redis-server}
     * binary, e.g. {@link RedisServerBinary#bundled()} (Redis 6.2) to test what a client
     * does without the features of Redis 7.
     * @param masters number of master nodes, at least 1
     * @param redisServer the {@code redis-server} executable
     * @return the running cluster; close it when done
     * @throws RedisStartupException when a node does not start
     * @throws IllegalStateException when the cluster does not form in time
     */
    public static RedisTestCluster start(int masters, Path redisServer) {
        return start(masters, 0, RedisTestServer.builder().binary(redisServer));
    }

    /**
     * Starts a cluster of {@code masters} masters, each with {@code replicasPerMaster}
     * replicas, and waits until every node reports {@code cluster_state:ok}, every node
     * sees each replica as a replica of its master, and every replica's link to its
     * master is up.
     *
     * <pre>{@code
     * RedisTestCluster cluster = RedisTestCluster.start(3, 1);   // 3 masters, 3 replicas
     * }</pre>
     *
     * <p>
     * {@link #nodes()} lists the masters first, in slot order, then the replicas: replica
     * {@code r} of master {@code m} is
     * {@code nodes().get(masters + m * replicasPerMaster + r)}.
     * @param masters number of master nodes, at least 1
     * @param replicasPerMaster number of replicas of each master, at least 0
     * @return the running cluster; close it when done
     * @throws RedisStartupException when a node does not start
     * @throws IllegalStateException when the cluster does not form in time
     */
    public static RedisTestCluster start(int masters, int replicasPerMaster) {
        return start(masters, replicasPerMaster, RedisTestServer.builder());
    }

    private static RedisTestCluster start(int masters, int replicasPerMaster, RedisTestServer.Builder builder) {
        if (masters < 1) {
            throw new IllegalArgumentException("masters must be at least 1, was " + masters);
        }
        if (replicasPerMaster < 0) {
            throw new IllegalArgumentException("replicasPerMaster must be at least 0, was " + replicasPerMaster);
        }
        List<RedisTestServer> nodes = builder.clusterEnabled()
            .args("--cluster-node-timeout", Integer.toString(NODE_TIMEOUT_MILLIS))
            .startMany(masters * (1 + replicasPerMaster));
        RedisTestCluster cluster = new RedisTestCluster(nodes, masters);
        try {
            cluster.form(replicasPerMaster);
            return cluster;
        }
        catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    private void form(int replicasPerMaster) {
        for (int i = 0; i < masterCount; i++) {
            RedisTestServer node = nodes.get(i);
            // Distinct epochs up front, as redis-cli --cluster create does, so no epoch
            // collision has to be
            // resolved by gossip before the slot ownership settles.
            node.command("CLUSTER", "SET-CONFIG-EPOCH", Integer.toString(i + 1));
            for (int from = firstSlot[i]; from <= lastSlot[i]; from += SLOTS_PER_ADDSLOTS_CALL) {
                int to = Math.min(lastSlot[i], from + SLOTS_PER_ADDSLOTS_CALL - 1);
                String[] args = new String[2 + to - from + 1];
                args[0] = "CLUSTER";
                args[1] = "ADDSLOTS";
                for (int slot = from; slot <= to; slot++) {
                    args[2 + slot - from] = Integer.toString(slot);
                }
                node.command(args);
            }
        }
        RedisTestServer first = nodes.get(0);
        for (RedisTestServer other : nodes.subList(1, nodes.size())) {
            first.command("CLUSTER", "MEET", other.host(), Integer.toString(other.port()));
        }
        if (replicasPerMaster > 0) {
            attachReplicas(replicasPerMaster);
        }
        awaitClusterOk(FORMATION_TIMEOUT);
    }

    /**
     * {@code CLUSTER REPLICATE} on every replica, once it has heard of its master through
     * the gossip that {@code CLUSTER MEET} started, then waits until every node sees the
     * replicas as such: a client that reads the topology from a node that has not yet
     * would take a replica for a master without slots.
     */
    private void attachReplicas(int replicasPerMaster) {
        long deadline = System.nanoTime() + FORMATION_TIMEOUT.toNanos();
        Map<RedisTestServer, String> masterIdOf = new LinkedHashMap<>();
        for (int m = 0; m < masterCount; m++) {
            String masterId = nodeId(nodes.get(m));
            for (int r = 0; r < replicasPerMaster; r++) {
                masterIdOf.put(nodes.get(masterCount + m * replicasPerMaster + r), masterId);
            }
        }
        masterIdOf.forEach((replica, masterId) -> {
            while (true) {
                try {
                    replica.command("CLUSTER", "REPLICATE", masterId);
                    break;
                }
                catch (RedisErrorReplyException e) {
                    // "Unknown node": the gossip has not reached this replica yet.
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(replica + " could not replicate " + masterId + " in time", e);
                    }
                    RedisTestServer.sleepMillis(50);
                }
            }
        });
        masterIdOf.keySet().forEach(replica -> replica.awaitMasterLinkUp(FORMATION_TIMEOUT));
        awaitEveryNodeSees("the replicas attached", () -> {
            for (RedisTestServer node : nodes) {
                Map<String, String[]> view = clusterNodes(node);
                for (Map.Entry<RedisTestServer, String> replica : masterIdOf.entrySet()) {
                    String[] fields = view.get(replica.getKey().host() + ":" + replica.getKey().port());
                    if (fields == null || !fields[2].contains("slave") || !fields[3].equals(replica.getValue())) {
                        return node + " does not yet see " + replica.getKey() + " as a replica of "
                                + replica.getValue();
                    }
                }
            }
            return null;
        }, FORMATION_TIMEOUT);
    }

    /**
     * Waits until every running node knows all nodes and reports
     * {@code cluster_state:ok}, e.g. after a killed node was restarted.
     * @param timeout how long to wait at most
     * @throws IllegalStateException when the state is not reached in time
     */
    public void awaitClusterOk(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        String lastState = "";
        while (System.nanoTime() < deadline) {
            StringBuilder states = new StringBuilder();
            boolean allOk = true;
            for (RedisTestServer node : nodes) {
                String state;
                String known;
                try {
                    String info = (String) node.command("CLUSTER", "INFO");
                    state = RedisTestServer.parseInfoField(info, "cluster_state");
                    known = RedisTestServer.parseInfoField(info, "cluster_known_nodes");
                }
                catch (RuntimeException e) {
                    state = e.getClass().getSimpleName();
                    known = "?";
                }
                states.append(node.port()).append('=').append(state).append('/').append(known).append(' ');
                allOk &= "ok".equals(state) && Integer.toString(nodes.size()).equals(known);
            }
            if (allOk) {
                return;
            }
            lastState = states.toString();
            RedisTestServer.sleepMillis(50);
        }
        throw new IllegalStateException("Redis Cluster did not reach cluster_state:ok within " + timeout
                + " (port=state/known nodes: " + lastState + ")");
    }

    /**
     * All nodes, in start order; node {@code i} owns the {@code i}-th contiguous slot
     * range, except for slots moved by {@link #migrateSlot(int, RedisTestServer)}. In a
     * cluster with replicas ({@link #start(int, int)}) the masters come first and the
     * replicas follow; {@link #masters()} and {@link #replicas()} tell the current roles.
     * @return an unmodifiable list
     */
    public List<RedisTestServer> nodes() {
        return nodes;
    }

    /**
     * The nodes that are masters now: as started, until
     * {@link #failover(RedisTestServer)} swaps a master with its replica. Master
     * {@code i} serves the {@code i}-th slot range, apart from slots moved by
     * {@link #migrateSlot}.
     *
     * <pre>{@code
     * cluster.masters().forEach(RedisTestServer::flushAll);   // replicas refuse FLUSHALL
     * }</pre>
     * @return the masters, in slot-range order
     */
    public synchronized List<RedisTestServer> masters() {
        List<RedisTestServer> masters = new ArrayList<>();
        for (int i = 0; i < masterCount; i++) {
            masters.add(nodes.get(rangeMaster[i]));
        }
        return masters;
    }

    /**
     * The nodes that are replicas now; empty unless started with
     * {@link #start(int, int)}.
     * @return the replicas, in start order
     */
    public synchronized List<RedisTestServer> replicas() {
        List<RedisTestServer> replicas = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            if (replicaIndexes.contains(i)) {
                replicas.add(nodes.get(i));
            }
        }
        return replicas;
    }

    /**
     * The replicas of a master now, as the master reports them
     * ({@code CLUSTER REPLICAS}).
     * @param master one of {@link #masters()}
     * @return its replicas; empty if it has none
     */
    public List<RedisTestServer> replicasOf(RedisTestServer master) {
        List<RedisTestServer> replicas = new ArrayList<>();
        for (Object line : (List<?>) master.command("CLUSTER", "REPLICAS", nodeId(master))) {
            String address = addressOf(((String) line).split(" "));
            nodes.stream()
                .filter(node -> (node.host() + ":" + node.port()).equals(address))
                .findFirst()
                .ifPresent(replicas::add);
        }
        return replicas;
    }

    /**
     * Fails a master over to its replica on purpose, as an operator does: sends
     * {@code CLUSTER FAILOVER} (without {@code FORCE}) to the replica, which has the
     * master stop accepting writes, catches up with its replication stream and only then
     * takes over its slots, so no acknowledged write is lost. Returns once every running
     * node names the replica as the owner of those slots, the old master has become its
     * replica with its link up, and every node reports {@code cluster_state:ok}. Clients
     * that address the old master get {@code MOVED} to the new one from then on; their
     * connections stay open.
     *
     * <pre>{@code
     * RedisTestServer before = cluster.nodeForKey("lock:{order-42}");
     * RedisTestServer after = cluster.failover(before);
     * assertThat(cluster.nodeForKey("lock:{order-42}")).isSameAs(after);
     * }</pre>
     * @param master one of {@link #masters()}, with at least one replica
     * @return the promoted replica, now a master
     * @throws IllegalArgumentException when {@code master} is not a master of this
     * cluster or has no replica
     * @throws IllegalStateException when the failover does not complete in time
     */
    public RedisTestServer failover(RedisTestServer master) {
        if (!masters().contains(master)) {
            throw new IllegalArgumentException(master + " is not a master of " + this);
        }
        List<RedisTestServer> candidates = replicasOf(master);
        if (candidates.isEmpty()) {
            throw new IllegalArgumentException(master + " has no replica to fail over to; start the cluster with "
                    + "RedisTestCluster.start(masters, replicasPerMaster)");
        }
        RedisTestServer replica = candidates.get(0);
        // Caught up first, so that the master's pause for the hand-over is short.
        replica.awaitMasterLinkUp(FAILOVER_TIMEOUT);
        int range = rangeOf(master);
        String slot = Integer.toString(firstSlot[range]);
        String replicaId = nodeId(replica);
        replica.command("CLUSTER", "FAILOVER");
        awaitEveryNodeSees("the failover of " + master + " to " + replica, () -> {
            if (!"master".equals(replica.infoValue("replication", "role"))) {
                return replica + " is not a master yet";
            }
            for (RedisTestServer node : nodes) {
                if (node.isRunning() && !node.isPaused()
                        && ownerPortAccordingTo(node, Integer.parseInt(slot)) != replica.port()) {
                    return node + " does not yet name " + replica + " as the owner of slot " + slot;
                }
            }
            if (!Integer.toString(replica.port()).equals(master.infoValue("replication", "master_port"))
                    || !"up".equals(master.infoValue("replication", "master_link_status"))) {
                return master + " is not yet a linked replica of " + replica;
            }
            // Every node's table too: a client reading the topology from a node that lags
            // would still take the
            // old master for one.
            for (RedisTestServer node : nodes) {
                if (node.isRunning() && !node.isPaused()) {
                    String[] fields = clusterNodes(node).get(master.host() + ":" + master.port());
                    if (fields == null || !fields[2].contains("slave") || !fields[3].equals(replicaId)) {
                        return node + " does not yet list " + master + " as a replica of " + replica;
                    }
                }
            }
            return null;
        }, FAILOVER_TIMEOUT);
        synchronized (this) {
            int from = nodes.indexOf(master);
            int to = nodes.indexOf(replica);
            for (int s = 0; s < SLOT_COUNT; s++) {
                if (slotOwner[s] == from) {
                    slotOwner[s] = to;
                }
            }
            rangeMaster[range] = to;
            replicaIndexes.remove(to);
            replicaIndexes.add(from);
        }
        awaitClusterOk(FAILOVER_TIMEOUT);
        return replica;
    }

    /** The slot range a master was started with, or took over by a failover. */
    private synchronized int rangeOf(RedisTestServer master) {
        int index = nodes.indexOf(master);
        for (int i = 0; i < masterCount; i++) {
            if (rangeMaster[i] == index) {
                return i;
            }
        }
        throw new IllegalArgumentException(master + " serves no slot range of " + this);
    }

    /** Polls {@code notYet} (what is not yet so, or null) until it answers null. */
    private static void awaitEveryNodeSees(String what, Supplier<String> notYet, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = null;
        while (System.nanoTime() < deadline) {
            try {
                last = notYet.get();
            }
            catch (RuntimeException e) {
                last = e.toString(); // a node busy with the change: ask again
            }
            if (last == null) {
                return;
            }
            RedisTestServer.sleepMillis(20);
        }
        throw new IllegalStateException("not every node saw " + what + " within " + timeout + ": " + last);
    }

    /** A node's {@code CLUSTER NODES}, by {@code host:port}: the fields of each line. */
    private static Map<String, String[]> clusterNodes(RedisTestServer node) {
        Map<String, String[]> view = new LinkedHashMap<>();
        for (String line : ((String) node.command("CLUSTER", "NODES")).split("\n")) {
            if (!line.isBlank()) {
                String[] fields = line.trim().split(" ");
                view.put(addressOf(fields), fields);
            }
        }
        return view;
    }

    /**
     * {@code host:port} of a {@code CLUSTER NODES} line; its second field is
     * {@code host:port@busport[,hostname]}.
     */
    private static String addressOf(String[] fields) {
        String address = fields[1];
        int bus = address.indexOf('@');
        return bus < 0 ? address : address.substring(0, bus);
    }

    /**
     * One node.
     * @param index 0-based
     * @return the node
     */
    public RedisTestServer node(int index) {
        return nodes.get(index);
    }

    /**
     * URIs of all nodes, e.g. for {@code spring.data.redis.cluster.nodes} (strip the
     * scheme) or a cluster client.
     * @return one {@code redis://127.0.0.1:PORT} per node
     */
    public List<String> redisUris() {
        return nodes.stream().map(RedisTestServer::redisUri).collect(Collectors.toList());
    }

    /**
     * {@code host:port} of all nodes, the form {@code spring.data.redis.cluster.nodes}
     * expects.
     * @return one {@code 127.0.0.1:PORT} per node
     */
    public List<String> hostAndPorts() {
        return nodes.stream().map(node -> node.host() + ":" + node.port()).collect(Collectors.toList());
    }

    /**
     * The hash slot of a key ({@code CLUSTER KEYSLOT}, honouring {@code {hash tags}}).
     * @param key the key
     * @return the slot, 0 to 16383
     */
    public int slotOf(String key) {
        for (RedisTestServer node : nodes) {
            if (node.isRunning() && !node.isPaused()) {
                return ((Long) node.command("CLUSTER", "KEYSLOT", key)).intValue();
            }
        }
        throw new IllegalStateException("no running node to ask for the slot of " + key);
    }

    /**
     * The node that owns a key's slot, e.g. to kill exactly the node holding a lock.
     * Follows {@link #migrateSlot(int, RedisTestServer)}.
     * @param key the key
     * @return the owning node
     */
    public RedisTestServer nodeForKey(String key) {
        return nodeForSlot(slotOf(key));
    }

    /**
     * The node that owns a hash slot: the one {@link #start()} assigned it to, or the
     * last {@link #migrateSlot(int, RedisTestServer)} target.
     * @param slot 0 to 16383
     * @return the owning node
     */
    public synchronized RedisTestServer nodeForSlot(int slot) {
        return nodes.get(slotOwner[checkSlot(slot)]);
    }

    /**
     * The keys matching a glob pattern on every master, found with {@code SCAN MATCH}
     * (never {@code KEYS}), and the node each one lives on. Lets a test find a lock's
     * keys whatever their exact name, e.g. all keys under the lock prefix, and check that
     * they are gone after a release. Replicas, paused and stopped nodes are skipped.
     * @param pattern a {@code SCAN MATCH} pattern such as {@code "lock:*"}; glob
     * characters in a literal prefix must be escaped with a backslash
     * @return key to owning node, in scan order per node
     */
    public Map<String, RedisTestServer> keys(String pattern) {
        Objects.requireNonNull(pattern, "pattern");
        Map<String, RedisTestServer> found = new LinkedHashMap<>();
        List<RedisTestServer> replicas = replicas();
        for (RedisTestServer node : nodes) {
            if (replicas.contains(node) || !node.isRunning() || node.isPaused()) {
                continue;
            }
            for (String key : node.scan(pattern)) {
                found.put(key, node);
            }
        }
        return found;
    }

    /**
     * Moves one hash slot, with its keys, to another master, the way
     * {@code redis-cli --cluster reshard} does, and returns once every running node
     * agrees on the new owner: {@code CLUSTER SETSLOT <slot> IMPORTING} on the target,
     * {@code MIGRATING} on the source, {@code MIGRATE ... KEYS} until
     * {@code CLUSTER GETKEYSINSLOT} is empty, then
     * {@code CLUSTER SETSLOT <slot> NODE <target>} on the target, the source and the
     * other nodes.
     *
     * <p>
     * Why: a client that cached the old owner now gets {@code MOVED} for the slot, which
     * is how a test proves that it follows a topology change. Keys keep their values and
     * remaining TTLs ({@code MIGRATE} transfers both). To run commands while the slot is
     * half-way, use {@link #beginSlotMigration(int, RedisTestServer)}.
     * @param slot the hash slot, e.g. {@link #slotOf(String)} of a lock key
     * @param to the new owner, one of {@link #nodes()}; nothing happens if it owns the
     * slot already
     * @throws IllegalArgumentException when {@code to} is not a node of this cluster
     * @throws IllegalStateException when the nodes do not agree on the new owner within
     * 10 s
     */
    public void migrateSlot(int slot, RedisTestServer to) {
        try (SlotMigration migration = beginSlotMigration(slot, to)) {
            migration.moveKeys();
        }
    }

    /**
     * Starts moving one hash slot to another master and leaves it half-way, for a test
     * that runs commands during a resharding: {@code CLUSTER SETSLOT <slot> IMPORTING} on
     * the target and {@code MIGRATING} on the source. Then
     * {@link SlotMigration#moveKeys()} moves the keys, and {@link SlotMigration#finish()}
     * (or {@code close()}) hands the slot over, as
     * {@link #migrateSlot(int, RedisTestServer)} does in one go.
     *
     * <p>
     * Meanwhile Redis answers as in a real resharding: the source serves keys it still
     * has and redirects the others with {@code ASK}; a command on several keys of which
     * only some are on the node it reached fails with {@code TRYAGAIN}, which clients are
     * expected to retry.
     *
     * <pre>{@code
     * try (SlotMigration migration = cluster.beginSlotMigration(slot, target)) {
     *     migration.moveKeys();
     *     // commands on the slot now meet ASK and TRYAGAIN
     * }   // the slot belongs to target, and every node agrees
     * }</pre>
     * @param slot the hash slot
     * @param to the new owner, one of {@link #nodes()}, not the current one
     * @return the migration in progress; finish or close it
     * @throws IllegalArgumentException when {@code to} is not a node of this cluster or
     * already owns the slot
     */
    public synchronized SlotMigration beginSlotMigration(int slot, RedisTestServer to) {
        checkSlot(slot);
        if (!nodes.contains(to)) {
            throw new IllegalArgumentException(to + " is not a node of " + this);
        }
        RedisTestServer from = nodes.get(slotOwner[slot]);
        if (from == to) {
            throw new IllegalArgumentException(to + " already owns slot " + slot);
        }
        SlotMigration migration = new SlotMigration(slot, from, to);
        to.command("CLUSTER", "SETSLOT", migration.slotArg, "IMPORTING", migration.fromId);
        from.command("CLUSTER", "SETSLOT", migration.slotArg, "MIGRATING", migration.toId);
        return migration;
    }

    /**
     * A hash slot on its way from one master to another; see
     * {@link #beginSlotMigration(int, RedisTestServer)}.
     */
    public final class SlotMigration implements AutoCloseable {

        private final int slot;

        private final String slotArg;

        private final RedisTestServer from;

        private final RedisTestServer to;

        private final String fromId;

        private final String toId;

        private boolean finished;

        private SlotMigration(int slot, RedisTestServer from, RedisTestServer to) {
            this.slot = slot;
            this.slotArg = Integer.toString(slot);
            this.from = from;
            this.to = to;
            this.fromId = nodeId(from);
            this.toId = nodeId(to);
        }

        /**
         * The slot being moved.
         * @return 0 to 16383
         */
        public int slot() {
            return slot;
        }

        /**
         * The node the slot comes from.
         * @return the source
         */
        public RedisTestServer source() {
            return from;
        }

        /**
         * The node the slot goes to.
         * @return the target
         */
        public RedisTestServer target() {
            return to;
        }

        /**
         * Moves every key of the slot that is still on the source to the target with
         * {@code MIGRATE ... KEYS}, until {@code CLUSTER GETKEYSINSLOT} on the source is
         * empty. Keys keep their values and remaining TTLs.
         * @return how many keys were moved
         */
        public int moveKeys() {
            int moved = 0;
            while (true) {
                List<?> keys = (List<?>) from.command("CLUSTER", "GETKEYSINSLOT", slotArg,
                        Integer.toString(KEYS_PER_MIGRATE_CALL));
                if (keys.isEmpty()) {
                    return moved;
                }
                List<String> migrate = new ArrayList<>(List.of("MIGRATE", to.host(), Integer.toString(to.port()), "",
                        "0", Long.toString(MIGRATION_TIMEOUT.toMillis()), "KEYS"));
                keys.forEach(key -> migrate.add((String) key));
                from.command(migrate.toArray(String[]::new));
                moved += keys.size();
            }
        }

        /**
         * Moves the remaining keys and assigns the slot to the target
         * ({@code CLUSTER SETSLOT <slot> NODE}) on the target first, then on the source
         * and the other running nodes, and waits until all of them agree. Idempotent.
         * @throws IllegalStateException when the nodes do not agree within 10 s
         */
        public void finish() {
            synchronized (RedisTestCluster.this) {
                if (finished) {
                    return;
                }
                finished = true;
                moveKeys();
                // Target first, so that it serves the slot before the source starts
                // answering MOVED (as redis-cli).
                to.command("CLUSTER", "SETSLOT", slotArg, "NODE", toId);
                from.command("CLUSTER", "SETSLOT", slotArg, "NODE", toId);
                for (RedisTestServer other : nodes) {
                    if (other != to && other != from && other.isRunning() && !other.isPaused()) {
                        other.command("CLUSTER", "SETSLOT", slotArg, "NODE", toId);
                    }
                }
                slotOwner[slot] = nodes.indexOf(to);
                awaitSlotOwner(slot, to, MIGRATION_TIMEOUT);
            }
        }

        /** {@link #finish()}. */
        @Override
        public void close() {
            finish();
        }

        @Override
        public String toString() {
            return "SlotMigration[slot " + slot + ": " + from + " -> " + to + (finished ? ", finished]" : "]");
        }

    }

    /**
     * The node's id in the cluster ({@code CLUSTER MYID}), as {@code CLUSTER NODES} and
     * {@code CLUSTER SETSLOT} name it.
     * @param node one of {@link #nodes()}
     * @return the 40-character node id
     */
    public String nodeId(RedisTestServer node) {
        return (String) node.command("CLUSTER", "MYID");
    }

    private void awaitSlotOwner(int slot, RedisTestServer owner, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        String disagreement = "";
        while (System.nanoTime() < deadline) {
            StringBuilder views = new StringBuilder();
            boolean agreed = true;
            for (RedisTestServer node : nodes) {
                if (!node.isRunning() || node.isPaused()) {
                    continue;
                }
                int port = ownerPortAccordingTo(node, slot);
                views.append(node.port()).append("->").append(port).append(' ');
                agreed &= port == owner.port();
            }
            if (agreed) {
                return;
            }
            disagreement = views.toString();
            RedisTestServer.sleepMillis(20);
        }
        throw new IllegalStateException("the nodes of " + this + " did not agree within " + timeout + " that slot "
                + slot + " belongs to " + owner + " (node->owner port: " + disagreement + ")");
    }

    /**
     * The port of the slot's master in a node's {@code CLUSTER SLOTS} reply, or -1 if it
     * knows none.
     */
    private static int ownerPortAccordingTo(RedisTestServer node, int slot) {
        for (Object range : (List<?>) node.command("CLUSTER", "SLOTS")) {
            List<?> fields = (List<?>) range;
            if ((Long) fields.get(0) <= slot && slot <= (Long) fields.get(1)) {
                return ((Long) ((List<?>) fields.get(2)).get(1)).intValue();
            }
        }
        return -1;
    }

    private static int checkSlot(int slot) {
        if (slot < 0 || slot >= SLOT_COUNT) {
            throw new IllegalArgumentException("slot must be between 0 and " + (SLOT_COUNT - 1) + ", was " + slot);
        }
        return slot;
    }

    /** Closes all nodes; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        nodes.forEach(RedisTestServer::close);
    }

    /**
     * The node addresses, for assertion messages and logs.
     * @return e.g. {@code RedisTestCluster[127.0.0.1:41234, ...]}
     */
    @Override
    public String toString() {
        return "RedisTestCluster" + hostAndPorts();
    }

}
