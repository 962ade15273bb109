package io.github.distlock.benchmarks.adapter;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Where the adapters of the consensus part connect: one 3-member etcd cluster, one
 * 3-member ZooKeeper ensemble and one redis-server, shared by every implementation of one
 * run, so that each store's peers are measured against the very same servers.
 *
 * <p>
 * The servers run in the process that drives the run ({@link ConsensusServers}); the JMH
 * forks and the harness forks find them through {@link #systemProperties()}.
 *
 * @param etcdEndpoints the etcd members' client URLs, e.g. {@code http://127.0.0.1:2379}
 * @param zooKeeperConnectString the ensemble's connect string, {@code host:port,...}
 * @param redis the redis-server, for ours on Redis beside them for scale
 * @param waitTime how long {@link LockAdapter#runLocked} waits for another owner
 */
public record ConsensusTarget(List<String> etcdEndpoints, String zooKeeperConnectString, RedisTarget redis,
        Duration waitTime) {

    /** System property with the etcd endpoints, comma-separated. */
    public static final String ETCD_PROPERTY = "bench.consensus.etcd";

    /** System property with the ZooKeeper connect string. */
    public static final String ZOOKEEPER_PROPERTY = "bench.consensus.zookeeper";

    /** System property with the redis-server, {@code host:port}. */
    public static final String REDIS_PROPERTY = "bench.consensus.redis";

    /** Copies the endpoint list. */
    public ConsensusTarget {
        etcdEndpoints = List.copyOf(etcdEndpoints);
    }

    /**
     * The servers as system properties, for a JVM started to measure against them.
     * @return property name to value
     */
    public Map<String, String> systemProperties() {
        return Map.of(ETCD_PROPERTY, String.join(",", etcdEndpoints), ZOOKEEPER_PROPERTY, zooKeeperConnectString,
                REDIS_PROPERTY, redis.host() + ":" + redis.port());
    }

    /**
     * The servers a parent process started, as it passed them in
     * {@link #systemProperties()}.
     * @param waitTime the wait limit
     * @return the target
     * @throws IllegalStateException naming the missing property, if this JVM was not
     * started by a consensus run
     */
    public static ConsensusTarget fromSystemProperties(Duration waitTime) {
        String etcd = require(ETCD_PROPERTY);
        String zooKeeper = require(ZOOKEEPER_PROPERTY);
        String redis = require(REDIS_PROPERTY);
        int colon = redis.lastIndexOf(':');
        return new ConsensusTarget(Arrays.asList(etcd.split(",")), zooKeeper,
                new RedisTarget(redis.substring(0, colon), Integer.parseInt(redis.substring(colon + 1)), waitTime),
                waitTime);
    }

    private static String require(String property) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("system property " + property + " is not set: the consensus benchmarks "
                    + "measure against servers that ConsensusMain (or the smoke test) starts and names with " + "-D"
                    + property + "=...; run them through it");
        }
        return value;
    }

}
