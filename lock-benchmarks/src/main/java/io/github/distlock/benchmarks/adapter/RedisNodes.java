package io.github.distlock.benchmarks.adapter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.distlock.testsupport.RedisTestServer;

/**
 * The redis-server processes one measurement of one implementation runs against: one for
 * a single-Redis lock, {@link Implementation#nodes()} independent masters for a Redlock.
 * Each is a plain master on a free loopback port with persistence off, started the same
 * way as the single node of the other scenarios, and all are closed together.
 *
 * <pre>{@code
 * try (RedisNodes nodes = RedisNodes.start(Implementation.OURS_REDLOCK.nodes())) {
 *     LockAdapter adapter = Implementation.OURS_REDLOCK.open(nodes.target(RedisTarget.DEFAULT_WAIT));
 * }
 * }</pre>
 */
public final class RedisNodes implements AutoCloseable {

    private final List<RedisTestServer> servers;

    private RedisNodes(List<RedisTestServer> servers) {
        this.servers = servers;
    }

    /**
     * Starts {@code count} independent servers.
     * @param count 1 for a single Redis, more for a Redlock
     * @return the running servers; close them when done
     */
    public static RedisNodes start(int count) {
        return new RedisNodes(count == 1 ? List.of(RedisTestServer.start()) : RedisTestServer.startMany(count));
    }

    /**
     * Starts what {@code implementation} needs.
     * @param implementation the implementation to be measured
     * @return the running servers; close them when done
     */
    public static RedisNodes startFor(Implementation implementation) {
        return start(implementation.nodes());
    }

    /**
     * @param waitTime the adapters' wait limit
     * @return the target: the first server, plus every server's port when there are
     * several
     */
    public RedisTarget target(Duration waitTime) {
        RedisTestServer first = servers.get(0);
        List<Integer> ports = servers.size() == 1 ? List.of() : servers.stream().map(RedisTestServer::port).toList();
        return new RedisTarget(first.host(), first.port(), waitTime, ports);
    }

    /** The servers, in the order of {@link RedisTarget#nodePorts()}. */
    public List<RedisTestServer> servers() {
        return servers;
    }

    /** Closes every server, also when closing one fails. */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (RedisTestServer server : new ArrayList<>(servers)) {
            try {
                server.close();
            }
            catch (RuntimeException ex) {
                failure = failure == null ? ex : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

}
