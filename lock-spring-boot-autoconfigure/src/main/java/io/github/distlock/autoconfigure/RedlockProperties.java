package io.github.distlock.autoconfigure;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Redlock over independent Redis masters ({@code distributed-lock.redlock.*}). With nodes
 * configured, every lock is a Redlock over them; without, the single Redis of
 * {@code spring.data.redis.*} backs every lock.
 *
 * <pre>{@code
 * distributed-lock:
 *   redlock:
 *     nodes: redis://lock-1:6379, redis://lock-2:6379, rediss://user:secret@lock-3:6380
 *     node-timeout: 50ms
 * }</pre>
 */
public class RedlockProperties {

    /** Where the Redlock settings live. */
    public static final String PREFIX = DistributedLockProperties.PREFIX + ".redlock";

    /**
     * The independent masters, as a comma-separated list of Redis URIs
     * (redis://[user:password@]host[:port][/database], or rediss:// for TLS): at least 3,
     * 5 recommended, an odd number, each listed once. Each gets its own client. Empty
     * (the default) means no Redlock: locks live in the single Redis of
     * spring.data.redis.*.
     */
    private List<String> nodes = new ArrayList<>();

    /**
     * Upper bound on each command to each node, from 1ms to 1m, such as 50ms; a bare
     * number means milliseconds. A node that has not answered by then counts as a no
     * vote, so keep it short (a few round trips of the network to the nodes), well below
     * the ttl.
     */
    private Duration nodeTimeout = Duration.ofMillis(50);

    /**
     * Share of the ttl allowed for the clocks of the nodes running at different rates: a
     * lock is valid for the ttl less the time the vote took, less ttl x drift-factor + 2
     * ms. A number from 0 (inclusive) to 0.5 (exclusive); 0.01 allows the clocks to run
     * 1% apart.
     */
    private double driftFactor = 0.01;

    /**
     * Longest pause between two attempts of a caller that waits for a Redlock, from 1ms
     * to 1m, such as 50ms; a bare number means milliseconds. Each pause is random between
     * half of it and all of it, so that two callers that split the votes do not collide
     * again. A release announced by any node wakes the longest waiter of each instance
     * sooner; this pause is the fallback when nothing is announced.
     */
    private Duration retryDelay = Duration.ofMillis(50);

    /**
     * Whether a node that restarted recently, or whose connection dropped and has not
     * been checked since, has its votes held back until it has been up longer than the
     * longest lease the application uses: true or false. A node whose run_id changed is
     * held back for one longest lease from when the change is seen, whatever uptime it
     * reports (another server may answer at its address). A node without persistence
     * forgets the locks it granted when it restarts, so its fresh vote could grant a lock
     * that another owner still holds; turn this off only if every node persists every
     * write (see durable-nodes).
     */
    private boolean restartProtection = true;

    /**
     * Nodes that keep every acknowledged write across a restart (AOF with appendfsync
     * always), as a comma-separated list of host:port or Redis URIs from nodes: their
     * votes count again as soon as they are reachable after a restart. Each must be one
     * of nodes. Empty (the default) means none.
     */
    private List<String> durableNodes = new ArrayList<>();

    public List<String> getNodes() {
        return nodes;
    }

    public void setNodes(List<String> nodes) {
        this.nodes = nodes;
    }

    public Duration getNodeTimeout() {
        return nodeTimeout;
    }

    public void setNodeTimeout(Duration nodeTimeout) {
        this.nodeTimeout = nodeTimeout;
    }

    public double getDriftFactor() {
        return driftFactor;
    }

    public void setDriftFactor(double driftFactor) {
        this.driftFactor = driftFactor;
    }

    public Duration getRetryDelay() {
        return retryDelay;
    }

    public void setRetryDelay(Duration retryDelay) {
        this.retryDelay = retryDelay;
    }

    public boolean isRestartProtection() {
        return restartProtection;
    }

    public void setRestartProtection(boolean restartProtection) {
        this.restartProtection = restartProtection;
    }

    public List<String> getDurableNodes() {
        return durableNodes;
    }

    public void setDurableNodes(List<String> durableNodes) {
        this.durableNodes = durableNodes;
    }

    /** The {@code host:port} of each durable node, as the nodes are named. */
    public Set<String> durableAddresses() {
        Set<String> addresses = new HashSet<>();
        for (String node : durableNodes) {
            addresses.add(address(node.contains("://") ? node : "redis://" + node));
        }
        return addresses;
    }

    /** Whether Redlock is configured at all. */
    public boolean hasNodes() {
        return nodes != null && !nodes.isEmpty();
    }

    /**
     * Checks the settings; only called when nodes are configured.
     * @throws InvalidConfigurationPropertyValueException naming the property, the value
     * and the fix
     */
    void validate() {
        String joined = String.join(", ", nodes);
        if (nodes.size() < 3) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".nodes", joined,
                    "Redlock needs at least 3 " + "independent masters, so that a majority survives the loss of one; "
                            + nodes.size() + " " + (nodes.size() == 1 ? "is" : "are")
                            + " configured. Add nodes (5 is the usual choice), or remove " + PREFIX
                            + ".nodes to lock on the single Redis of spring.data.redis.*.");
        }
        Map<String, String> seen = new HashMap<>();
        for (String node : nodes) {
            String address = address(node);
            String earlier = seen.putIfAbsent(address, node);
            if (earlier != null) {
                throw new InvalidConfigurationPropertyValueException(PREFIX + ".nodes", joined, "The node " + address
                        + " is listed twice (" + earlier + " and " + node + "). Redlock's safety comes from a majority "
                        + "of independent masters; the same master twice would vote twice. List each master once.");
            }
        }
        if (nodeTimeout == null || nodeTimeout.toMillis() < 1) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".node-timeout", nodeTimeout,
                    "The timeout must be at least 1ms. Use a few round trips to the nodes, such as 50ms.");
        }
        if (nodeTimeout.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".node-timeout", nodeTimeout,
                    "A node timeout over a minute would hold every lock call that long when one node hangs. Use a "
                            + "few round trips to the nodes, such as 50ms.");
        }
        if (!(driftFactor >= 0 && driftFactor < 0.5)) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".drift-factor", driftFactor,
                    "The drift factor must be at least 0 and below 0.5; 0.01 allows clocks to run 1% apart.");
        }
        List<String> configured = nodes.stream().map(RedlockProperties::address).toList();
        for (String durable : durableNodes) {
            String address = address(durable.contains("://") ? durable : "redis://" + durable);
            if (!configured.contains(address)) {
                throw new InvalidConfigurationPropertyValueException(PREFIX + ".durable-nodes", durable,
                        "The node " + address + " is not one of " + PREFIX + ".nodes (" + String.join(", ", configured)
                                + "). List only configured nodes, as host:port or as written in nodes.");
            }
        }
        if (retryDelay == null || retryDelay.toMillis() < 1 || retryDelay.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".retry-delay", retryDelay,
                    "The retry delay must be from 1ms to 1m; 50ms is the default.");
        }
    }

    /**
     * The {@code host:port} a node URI points at, for finding duplicates.
     * @throws InvalidConfigurationPropertyValueException if it is not a redis:// or
     * rediss:// URI with a host
     */
    static String address(String node) {
        URI uri;
        try {
            uri = new URI(node == null ? "" : node.trim());
        }
        catch (URISyntaxException ex) {
            throw badNode(node, ex.getMessage());
        }
        String scheme = uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!"redis".equals(scheme) && !"rediss".equals(scheme)) {
            throw badNode(node, "it does not start with redis:// or rediss://");
        }
        if (uri.getHost() == null || uri.getHost().isBlank()) {
            throw badNode(node, "it names no host");
        }
        int port = uri.getPort() == -1 ? 6379 : uri.getPort();
        return uri.getHost().toLowerCase(Locale.ROOT) + ":" + port;
    }

    private static InvalidConfigurationPropertyValueException badNode(String node, String why) {
        return new InvalidConfigurationPropertyValueException(PREFIX + ".nodes", node,
                "The node '" + node + "' is not a Redis URI: " + why
                        + ". Write each node as redis://[user:password@]host[:port], or "
                        + "rediss://... for TLS, for example redis://lock-1:6379.");
    }

}
