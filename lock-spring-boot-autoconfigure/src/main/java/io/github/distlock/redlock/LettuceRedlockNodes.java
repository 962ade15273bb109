package io.github.distlock.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.distlock.redis.LockConnection;
import io.github.distlock.redis.RedisLockBackend;
import io.github.distlock.redis.RedisReleaseSubscriber;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;

/**
 * The Lettuce clients of a Redlock: one {@link RedisClient} per independent master, all sharing
 * one set of client resources (event loops, timers), each with a {@link RedisLockBackend} on a
 * {@link LockConnection} of its own. Closing shuts the clients and the resources down.
 *
 * <pre>{@code
 * try (LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(
 *         List.of("redis://lock-1:6379", "redis://lock-2:6379", "redis://lock-3:6379"),
 *         Duration.ofMillis(50), "lock:")) {
 *     RedlockBackend redlock = nodes.redlock(0.01);
 * }
 * }</pre>
 */
public final class LettuceRedlockNodes implements AutoCloseable {

    private final ClientResources resources;
    private final List<RedisClient> clients;
    private final List<RedisLockBackend> backends;
    private final List<String> names;
    private final String keyPrefix;
    private final Duration nodeTimeout;

    private LettuceRedlockNodes(ClientResources resources, List<RedisClient> clients, List<RedisLockBackend> backends,
            List<String> names, String keyPrefix, Duration nodeTimeout) {
        this.resources = resources;
        this.clients = clients;
        this.backends = backends;
        this.names = names;
        this.keyPrefix = keyPrefix;
        this.nodeTimeout = nodeTimeout;
    }

    /**
     * Creates a client per node and starts connecting each in the background.
     *
     * @param uris the nodes' Redis URIs ({@code redis://[user:password@]host[:port][/db]}, or
     *        {@code rediss://} for TLS)
     * @param nodeTimeout the bound of every command to a node
     * @param keyPrefix prefix of every lock's key
     */
    public static LettuceRedlockNodes connect(List<String> uris, Duration nodeTimeout, String keyPrefix) {
        ClientResources resources = DefaultClientResources.create();
        List<RedisClient> clients = new ArrayList<>(uris.size());
        List<RedisLockBackend> backends = new ArrayList<>(uris.size());
        List<String> names = new ArrayList<>(uris.size());
        String channel = RedisReleaseSubscriber.releaseChannel(keyPrefix);
        for (String uri : uris) {
            RedisURI redisUri = RedisURI.create(uri.trim());
            RedisClient client = RedisClient.create(resources, redisUri);
            clients.add(client);
            names.add(redisUri.getHost() + ":" + redisUri.getPort());
            backends.add(new RedisLockBackend(new LockConnection(() -> client, nodeTimeout,
                    "distributed-lock.redlock.node-timeout"), keyPrefix, channel));
        }
        return new LettuceRedlockNodes(resources, clients, backends, names, keyPrefix, nodeTimeout);
    }

    /** The Redlock over these nodes; closing it closes these nodes too. */
    public RedlockBackend redlock(double driftFactor) {
        return new RedlockBackend(backends, names, keyPrefix, nodeTimeout, driftFactor, this);
    }

    /**
     * Waits until every node is connected, or {@code timeout} has passed.
     *
     * @return how many nodes are connected
     */
    public int awaitConnected(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int connected = 0;
        for (RedisLockBackend backend : backends) {
            if (backend.awaitConnected(deadline)) {
                connected++;
            }
        }
        return connected;
    }

    /** The nodes' {@code host:port}, in order. */
    public List<String> names() {
        return names;
    }

    @Override
    public void close() {
        for (RedisLockBackend backend : backends) {
            backend.close();
        }
        for (RedisClient client : clients) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        resources.shutdown();
    }
}
