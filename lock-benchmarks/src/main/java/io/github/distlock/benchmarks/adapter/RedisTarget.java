package io.github.distlock.benchmarks.adapter;

import java.time.Duration;

/**
 * Where the adapters connect and how long a contended acquisition may wait.
 *
 * @param host the redis-server host (always the loopback address of the benchmark's own server)
 * @param port its port
 * @param waitTime how long {@link LockAdapter#runLocked} waits for another owner
 */
public record RedisTarget(String host, int port, Duration waitTime) {

    /** The wait every scenario uses unless told otherwise: long enough that a fair lock never times out. */
    public static final Duration DEFAULT_WAIT = Duration.ofSeconds(10);

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
}
