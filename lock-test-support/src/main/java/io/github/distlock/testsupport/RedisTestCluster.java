package io.github.distlock.testsupport;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * A small Redis Cluster of masters only (3 by default), each a {@link RedisTestServer} in cluster mode, with the
 * 16384 hash slots split evenly and all nodes agreeing on {@code cluster_state:ok} before {@link #start()}
 * returns.
 *
 * <p>Why: lock keys must hash to one slot together with anything a script touches, and a client must follow
 * {@code MOVED} redirects; only a real cluster shows whether that holds. No replicas, so killing a node takes its
 * slots away (after the node timeout of {@value #NODE_TIMEOUT_MILLIS} ms the cluster reports {@code fail}) and
 * {@link RedisTestServer#restart()} brings them back, as the node keeps its identity in {@code nodes.conf}.
 *
 * <p>Slots are assigned with {@code CLUSTER ADDSLOTS} in batches, which Redis 6.2 understands too.
 */
public final class RedisTestCluster implements AutoCloseable {

    /** Number of hash slots in every Redis Cluster. */
    public static final int SLOT_COUNT = 16_384;

    /** {@code cluster-node-timeout} of the nodes; short, so tests that kill a node see the effect quickly. */
    public static final int NODE_TIMEOUT_MILLIS = 2_000;

    private static final int SLOTS_PER_ADDSLOTS_CALL = 1_000;
    private static final Duration FORMATION_TIMEOUT = Duration.ofSeconds(30);

    /** Keys moved per {@code MIGRATE} call by {@link #migrateSlot}. */
    private static final int KEYS_PER_MIGRATE_CALL = 100;
    private static final Duration MIGRATION_TIMEOUT = Duration.ofSeconds(10);

    private final List<RedisTestServer> nodes;
    private final int[] firstSlot;
    private final int[] lastSlot;
    /** Index in {@link #nodes} of each slot's owner; changed by {@link #migrateSlot}. */
    private final int[] slotOwner = new int[SLOT_COUNT];
    private boolean closed;

    private RedisTestCluster(List<RedisTestServer> nodes) {
        this.nodes = nodes;
        this.firstSlot = new int[nodes.size()];
        this.lastSlot = new int[nodes.size()];
        for (int i = 0; i < nodes.size(); i++) {
            firstSlot[i] = i * SLOT_COUNT / nodes.size();
            lastSlot[i] = (i + 1) * SLOT_COUNT / nodes.size() - 1;
            Arrays.fill(slotOwner, firstSlot[i], lastSlot[i] + 1, i);
        }
    }

    /**
     * Starts a 3-master cluster and waits until every node reports {@code cluster_state:ok}.
     *
     * @return the running cluster; close it when done
     * @throws RedisStartupException when a node does not start
     * @throws IllegalStateException when the cluster does not form in time
     */
    public static RedisTestCluster start() {
        return start(3);
    }

    /**
     * Starts a cluster of {@code masters} masters and waits until every node reports {@code cluster_state:ok}.
     *
     * @param masters number of master nodes, at least 1
     * @return the running cluster; close it when done
     * @throws RedisStartupException when a node does not start
     * @throws IllegalStateException when the cluster does not form in time
     */
    public static RedisTestCluster start(int masters) {
        return start(masters, RedisTestServer.builder());
    }

    /**
     * Starts a cluster of {@code masters} masters of the given {@code redis-server} binary, e.g.
     * {@link RedisServerBinary#bundled()} (Redis 6.2) to test what a client does without the features of Redis 7.
     *
     * @param masters     number of master nodes, at least 1
     * @param redisServer the {@code redis-server} executable
     * @return the running cluster; close it when done
     * @throws RedisStartupException when a node does not start
     * @throws IllegalStateException when the cluster does not form in time
     */
    public static RedisTestCluster start(int masters, Path redisServer) {
        return start(masters, RedisTestServer.builder().binary(redisServer));
    }

    private static RedisTestCluster start(int masters, RedisTestServer.Builder builder) {
        List<RedisTestServer> nodes = builder
                .clusterEnabled()
                .args("--cluster-node-timeout", Integer.toString(NODE_TIMEOUT_MILLIS))
                .startMany(masters);
        RedisTestCluster cluster = new RedisTestCluster(nodes);
        try {
            cluster.form();
            return cluster;
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    private void form() {
        for (int i = 0; i < nodes.size(); i++) {
            RedisTestServer node = nodes.get(i);
            // Distinct epochs up front, as redis-cli --cluster create does, so no epoch collision has to be
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
        awaitClusterOk(FORMATION_TIMEOUT);
    }

    /**
     * Waits until every running node knows all nodes and reports {@code cluster_state:ok}, e.g. after a killed
     * node was restarted.
     *
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
                } catch (RuntimeException e) {
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
     * All nodes, in start order; node {@code i} owns the {@code i}-th contiguous slot range, except for slots moved by
     * {@link #migrateSlot(int, RedisTestServer)}.
     *
     * @return an unmodifiable list
     */
    public List<RedisTestServer> nodes() {
        return nodes;
    }

    /**
     * One node.
     *
     * @param index 0-based
     * @return the node
     */
    public RedisTestServer node(int index) {
        return nodes.get(index);
    }

    /**
     * URIs of all nodes, e.g. for {@code spring.data.redis.cluster.nodes} (strip the scheme) or a cluster client.
     *
     * @return one {@code redis://127.0.0.1:PORT} per node
     */
    public List<String> redisUris() {
        return nodes.stream().map(RedisTestServer::redisUri).collect(Collectors.toList());
    }

    /**
     * {@code host:port} of all nodes, the form {@code spring.data.redis.cluster.nodes} expects.
     *
     * @return one {@code 127.0.0.1:PORT} per node
     */
    public List<String> hostAndPorts() {
        return nodes.stream().map(node -> node.host() + ":" + node.port()).collect(Collectors.toList());
    }

    /**
     * The hash slot of a key ({@code CLUSTER KEYSLOT}, honouring {@code {hash tags}}).
     *
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
     * The node that owns a key's slot, e.g. to kill exactly the node holding a lock. Follows
     * {@link #migrateSlot(int, RedisTestServer)}.
     *
     * @param key the key
     * @return the owning node
     */
    public RedisTestServer nodeForKey(String key) {
        return nodeForSlot(slotOf(key));
    }

    /**
     * The node that owns a hash slot: the one {@link #start()} assigned it to, or the last
     * {@link #migrateSlot(int, RedisTestServer)} target.
     *
     * @param slot 0 to 16383
     * @return the owning node
     */
    public synchronized RedisTestServer nodeForSlot(int slot) {
        return nodes.get(slotOwner[checkSlot(slot)]);
    }

    /**
     * The keys matching a glob pattern on every master, found with {@code SCAN MATCH} (never {@code KEYS}), and the
     * node each one lives on. Lets a test find a lock's keys whatever their exact name, e.g. all keys under the lock
     * prefix, and check that they are gone after a release. Paused and stopped nodes are skipped.
     *
     * @param pattern a {@code SCAN MATCH} pattern such as {@code "lock:*"}; glob characters in a literal prefix must
     *                be escaped with a backslash
     * @return key to owning node, in scan order per node
     */
    public Map<String, RedisTestServer> keys(String pattern) {
        Objects.requireNonNull(pattern, "pattern");
        Map<String, RedisTestServer> found = new LinkedHashMap<>();
        for (RedisTestServer node : nodes) {
            if (!node.isRunning() || node.isPaused()) {
                continue;
            }
            for (String key : node.scan(pattern)) {
                found.put(key, node);
            }
        }
        return found;
    }

    /**
     * Moves one hash slot, with its keys, to another master, the way {@code redis-cli --cluster reshard} does, and
     * returns once every running node agrees on the new owner: {@code CLUSTER SETSLOT <slot> IMPORTING} on the
     * target, {@code MIGRATING} on the source, {@code MIGRATE ... KEYS} until {@code CLUSTER GETKEYSINSLOT} is
     * empty, then {@code CLUSTER SETSLOT <slot> NODE <target>} on the target, the source and the other nodes.
     *
     * <p>Why: a client that cached the old owner now gets {@code MOVED} for the slot, which is how a test proves
     * that it follows a topology change. Keys keep their values and remaining TTLs ({@code MIGRATE} transfers both).
     * To run commands while the slot is half-way, use {@link #beginSlotMigration(int, RedisTestServer)}.
     *
     * @param slot the hash slot, e.g. {@link #slotOf(String)} of a lock key
     * @param to   the new owner, one of {@link #nodes()}; nothing happens if it owns the slot already
     * @throws IllegalArgumentException when {@code to} is not a node of this cluster
     * @throws IllegalStateException    when the nodes do not agree on the new owner within 10 s
     */
    public void migrateSlot(int slot, RedisTestServer to) {
        try (SlotMigration migration = beginSlotMigration(slot, to)) {
            migration.moveKeys();
        }
    }

    /**
     * Starts moving one hash slot to another master and leaves it half-way, for a test that runs commands during a
     * resharding: {@code CLUSTER SETSLOT <slot> IMPORTING} on the target and {@code MIGRATING} on the source. Then
     * {@link SlotMigration#moveKeys()} moves the keys, and {@link SlotMigration#finish()} (or {@code close()})
     * hands the slot over, as {@link #migrateSlot(int, RedisTestServer)} does in one go.
     *
     * <p>Meanwhile Redis answers as in a real resharding: the source serves keys it still has and redirects the
     * others with {@code ASK}; a command on several keys of which only some are on the node it reached fails with
     * {@code TRYAGAIN}, which clients are expected to retry.
     *
     * <pre>{@code
     * try (SlotMigration migration = cluster.beginSlotMigration(slot, target)) {
     *     migration.moveKeys();
     *     // commands on the slot now meet ASK and TRYAGAIN
     * }   // the slot belongs to target, and every node agrees
     * }</pre>
     *
     * @param slot the hash slot
     * @param to   the new owner, one of {@link #nodes()}, not the current one
     * @return the migration in progress; finish or close it
     * @throws IllegalArgumentException when {@code to} is not a node of this cluster or already owns the slot
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
     * A hash slot on its way from one master to another; see {@link #beginSlotMigration(int, RedisTestServer)}.
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
         *
         * @return 0 to 16383
         */
        public int slot() {
            return slot;
        }

        /**
         * The node the slot comes from.
         *
         * @return the source
         */
        public RedisTestServer source() {
            return from;
        }

        /**
         * The node the slot goes to.
         *
         * @return the target
         */
        public RedisTestServer target() {
            return to;
        }

        /**
         * Moves every key of the slot that is still on the source to the target with {@code MIGRATE ... KEYS}, until
         * {@code CLUSTER GETKEYSINSLOT} on the source is empty. Keys keep their values and remaining TTLs.
         *
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
         * Moves the remaining keys and assigns the slot to the target ({@code CLUSTER SETSLOT <slot> NODE}) on the
         * target first, then on the source and the other running nodes, and waits until all of them agree.
         * Idempotent.
         *
         * @throws IllegalStateException when the nodes do not agree within 10 s
         */
        public void finish() {
            synchronized (RedisTestCluster.this) {
                if (finished) {
                    return;
                }
                finished = true;
                moveKeys();
                // Target first, so that it serves the slot before the source starts answering MOVED (as redis-cli).
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
     * The node's id in the cluster ({@code CLUSTER MYID}), as {@code CLUSTER NODES} and {@code CLUSTER SETSLOT} name
     * it.
     *
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

    /** The port of the slot's master in a node's {@code CLUSTER SLOTS} reply, or -1 if it knows none. */
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
     *
     * @return e.g. {@code RedisTestCluster[127.0.0.1:41234, ...]}
     */
    @Override
    public String toString() {
        return "RedisTestCluster" + hostAndPorts();
    }
}
