package io.github.distlock.benchmarks.adapter;

import java.time.Duration;

import io.github.distlock.testsupport.EtcdTestCluster;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.zookeeper.ZooKeeperTestEnsemble;

/**
 * The servers of the consensus part: a 3-member etcd cluster and a 3-member ZooKeeper
 * ensemble, the size they run at in production (a majority of 2 must write every lock),
 * and one redis-server (persistence off) for scale. All local processes on loopback
 * ports, closed together.
 */
public final class ConsensusServers implements AutoCloseable {

    /** Members of the etcd cluster and of the ZooKeeper ensemble. */
    public static final int MEMBERS = 3;

    private EtcdTestCluster etcd;

    private ZooKeeperTestEnsemble zooKeeper;

    private RedisTestServer redis;

    private ConsensusServers() {
    }

    /**
     * Starts the three stores and waits until each answers (etcd healthy, ZooKeeper
     * serving with a leader).
     * @return the running servers; close them when done
     */
    public static ConsensusServers start() {
        ConsensusServers servers = new ConsensusServers();
        try {
            servers.etcd = EtcdTestCluster.start(MEMBERS);
            servers.zooKeeper = ZooKeeperTestEnsemble.start(MEMBERS);
            servers.zooKeeper.awaitServing(Duration.ofSeconds(60));
            servers.redis = RedisTestServer.start();
            return servers;
        }
        catch (RuntimeException ex) {
            servers.close();
            throw ex;
        }
    }

    /**
     * @param waitTime the adapters' wait limit
     * @return where the adapters connect
     */
    public ConsensusTarget target(Duration waitTime) {
        return new ConsensusTarget(etcd.endpoints(), zooKeeper.connectString(),
                new RedisTarget(redis.host(), redis.port(), waitTime), waitTime);
    }

    /** The etcd version the cluster runs, for the report. */
    public String etcdVersion() {
        return etcd.version();
    }

    /** Closes every server that was started, also when closing one fails. */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (AutoCloseable server : new AutoCloseable[] { redis, zooKeeper, etcd }) {
            if (server == null) {
                continue;
            }
            try {
                server.close();
            }
            catch (Exception ex) {
                failure = failure == null ? new IllegalStateException("closing " + server + " failed", ex) : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

}
