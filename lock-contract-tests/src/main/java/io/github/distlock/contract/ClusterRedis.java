package io.github.distlock.contract;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.github.distlock.testsupport.RedisTestCluster;
import io.github.distlock.testsupport.RedisTestServer;

/** A 3-master Redis Cluster, as {@code spring.data.redis.cluster.nodes} configures it. */
public final class ClusterRedis implements ContractRedis {

    private final RedisTestCluster cluster;

    private ClusterRedis(RedisTestCluster cluster) {
        this.cluster = cluster;
    }

    /** Starts a cluster of three masters, closed with this object. */
    public static ClusterRedis start() {
        return new ClusterRedis(RedisTestCluster.start(3));
    }

    /** The cluster, for tests of a subclass that need more than the contract does. */
    public RedisTestCluster cluster() {
        return cluster;
    }

    @Override
    public List<String> springProperties() {
        return List.of("spring.data.redis.cluster.nodes=" + String.join(",", cluster.hostAndPorts()));
    }

    @Override
    public Object command(String key, String... command) {
        return cluster.nodeForKey(key).command(command);
    }

    @Override
    public Set<String> keys(String pattern) {
        return new TreeSet<>(cluster.keys(pattern).keySet());
    }

    @Override
    public void reset() {
        cluster.nodes().forEach(RedisTestServer::resume);
        cluster.awaitClusterOk(Duration.ofSeconds(30));
        cluster.nodes().forEach(RedisTestServer::flushAll);
    }

    @Override
    public void close() {
        cluster.close();
    }

    @Override
    public String toString() {
        return "cluster " + cluster;
    }

}
