package io.github.distlock.testsupport;

import java.util.List;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that runs a {@link RedisTestCluster} for a test class:
 *
 * <pre>{@code
 * &#64;RegisterExtension
 * static RedisClusterExtension cluster = new RedisClusterExtension();
 * }</pre>
 *
 * <p>
 * Register it in a {@code static} field: forming a cluster takes about a second, too slow
 * to repeat per test. The cluster starts before the first test and is closed after the
 * last, also when tests fail; {@code @Nested} classes share it.
 */
public class RedisClusterExtension implements BeforeAllCallback, AfterAllCallback {

    private final int masters;

    private final int replicasPerMaster;

    private RedisTestCluster cluster;

    private String ownerContextId;

    /** A cluster of 3 masters. */
    public RedisClusterExtension() {
        this(3);
    }

    /**
     * A cluster of the given number of masters.
     * @param masters at least 1
     */
    public RedisClusterExtension(int masters) {
        this(masters, 0);
    }

    /**
     * A cluster of the given number of masters, each with {@code replicasPerMaster}
     * replicas, for tests that fail a master over
     * ({@link RedisTestCluster#failover(RedisTestServer)}).
     *
     * <pre>{@code
     * &#64;RegisterExtension
     * static RedisClusterExtension cluster = new RedisClusterExtension(3, 1);
     * }</pre>
     * @param masters at least 1
     * @param replicasPerMaster at least 0
     */
    public RedisClusterExtension(int masters, int replicasPerMaster) {
        if (masters < 1) {
            throw new IllegalArgumentException("masters must be at least 1, was " + masters);
        }
        if (replicasPerMaster < 0) {
            throw new IllegalArgumentException("replicasPerMaster must be at least 0, was " + replicasPerMaster);
        }
        this.masters = masters;
        this.replicasPerMaster = replicasPerMaster;
    }

    /**
     * Starts the cluster unless an outer class already did.
     * @param context the class context
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        if (cluster == null) {
            cluster = RedisTestCluster.start(masters, replicasPerMaster);
            ownerContextId = context.getUniqueId();
        }
    }

    /**
     * Closes the cluster once the class that started it is done.
     * @param context the class context
     */
    @Override
    public void afterAll(ExtensionContext context) {
        if (cluster != null && context.getUniqueId().equals(ownerContextId)) {
            cluster.close();
            cluster = null;
            ownerContextId = null;
        }
    }

    /**
     * The running cluster.
     * @return the cluster
     * @throws IllegalStateException outside beforeAll/afterAll, e.g. when registered in
     * an instance field
     */
    public RedisTestCluster cluster() {
        if (cluster == null) {
            throw new IllegalStateException("the Redis Cluster is not running: register RedisClusterExtension in a "
                    + "static @RegisterExtension field and use it from tests");
        }
        return cluster;
    }

    /**
     * The cluster's nodes.
     * @return the nodes, in start order
     */
    public List<RedisTestServer> nodes() {
        return cluster().nodes();
    }

    /**
     * {@code host:port} of all nodes, e.g. for {@code spring.data.redis.cluster.nodes}.
     * @return one {@code 127.0.0.1:PORT} per node
     */
    public List<String> hostAndPorts() {
        return cluster().hostAndPorts();
    }

}
