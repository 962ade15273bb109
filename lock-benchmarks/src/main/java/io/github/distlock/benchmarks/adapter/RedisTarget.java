package io.github.distlock.benchmarks.adapter;

import java.time.Duration;
import java.util.List;

/**
 * Where the adapters connect and how long a contended acquisition may wait.
 *
 * @param host the redis-server host (always the loopback address of the benchmark's own
 * servers)
 * @param port its port; for a Redlock target, the first node's
 * @param waitTime how long {@link LockAdapter#runLocked} waits for another owner
 * @param nodePorts the ports of the independent masters a Redlock implementation locks
 * over, all on {@code host}; empty for a single Redis
 */
public record RedisTarget(String host, int port, Duration waitTime, List<Integer> nodePorts) {

    /**
     * The wait every scenario uses unless told otherwise: long enough that a fair lock
     * never times out.
     */
    public static final Duration DEFAULT_WAIT = Duration.ofSeconds(10);

    /** Copies the node list, so that a target never changes under a running client. */
    public RedisTarget {
        nodePorts = nodePorts == null ? List.of() : List.copyOf(nodePorts);
    }

    /**
     * A single Redis.
     * @param host the host
     * @param port the port
     * @param waitTime the wait limit
     */
    public RedisTarget(String host, int port, Duration waitTime) {
        this(host, port, waitTime, List.of());
    }

    /**
     * @param host the host
     * @param port the port
     * @return a target with {@link #DEFAULT_WAIT}
     */
    public static RedisTarget of(String host, int port) {
        return new RedisTarget(host, port, DEFAULT_WAIT);
    }

    /** {@code redis://host:port}, for clients that take a URI. */
    public String uri() {
        return "redis://" + host + ":" + port;
    }

    /**
     * {@code redis://host:port} of every Redlock node, in order; empty for a single
     * Redis.
     */
    public List<String> nodeUris() {
        return nodePorts.stream().map(nodePort -> "redis://" + host + ":" + nodePort).toList();
    }

    /**
     * @param waitTime another wait limit
     * @return this target with that wait limit
     */
    public RedisTarget withWaitTime(Duration waitTime) {
        return new RedisTarget(host, port, waitTime, nodePorts);
    }
}
