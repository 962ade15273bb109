package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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

    private final List<RedisTestServer> nodes;
    private final int[] firstSlot;
    private final int[] lastSlot;
    private boolean closed;

    private RedisTestCluster(List<RedisTestServer> nodes) {
        this.nodes = nodes;
        this.firstSlot = new int[nodes.size()];
        this.lastSlot = new int[nodes.size()];
        for (int i = 0; i < nodes.size(); i++) {
            firstSlot[i] = i * SLOT_COUNT / nodes.size();
            lastSlot[i] = (i + 1) * SLOT_COUNT / nodes.size() - 1;
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
        List<RedisTestServer> nodes = RedisTestServer.builder()
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
     * All nodes, in start order; node {@code i} owns the {@code i}-th contiguous slot range.
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
     * The node that owns a key's slot, e.g. to kill exactly the node holding a lock.
     *
     * @param key the key
     * @return the owning node
     */
    public RedisTestServer nodeForKey(String key) {
        int slot = slotOf(key);
        for (int i = 0; i < nodes.size(); i++) {
            if (slot >= firstSlot[i] && slot <= lastSlot[i]) {
                return nodes.get(i);
            }
        }
        throw new IllegalStateException("slot " + slot + " is not assigned");
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
