package io.github.distlock.contract;

import java.util.EnumSet;
import java.util.Set;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/** The contract on a 3-master Redis Cluster through Lettuce; the locks of one test spread over the masters. */
class ClusterLettuceLockContractTest extends AbstractLockContractTest {

    @Override
    protected ContractRedis startRedis() {
        return ClusterRedis.start();
    }

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.FENCING, Capability.WAIT_QUEUE);
    }

    /**
     * Fails on a Cluster: closing the application logs Lettuce's "Connection is already closed" WARN once per node
     * the lock connection used. The lock's own cluster connection is still open when the connection factory, a
     * lifecycle bean, stops and shuts its RedisClusterClient down; the client's shutdown then closes that cluster
     * connection, which closes its node connections, and afterwards each node connection again, as a resource of
     * its own (AbstractRedisClient.closeResources). LockConnection.close(), at bean destruction, comes too late to
     * prevent it. A standalone or Sentinel application shuts down quietly.
     */
    @Override
    @Test
    @Disabled("Defect: a Cluster application that used locks logs Lettuce's 'Connection is already closed' WARN "
            + "at shutdown (see Javadoc)")
    protected void anApplicationThatUsedLocksShutsDownWithoutWarnings() {
        super.anApplicationThatUsedLocksShutsDownWithoutWarnings();
    }

    /**
     * Fails on a Cluster: an application closed while the lock connection still connects in the background (thread
     * distributed-lock-connect, LockConnection.connect: RedisClusterClient.connect loading the topology) logs Lettuce's
     * "DefaultClusterTopologyRefresh: Unable to connect to [...]: executor not accepting a task" WARN once per node,
     * or "Provider is shut down" with a stack trace: the connection factory shut the client down under the connect,
     * which nothing cancels or waits for. A standalone or Sentinel application shuts down quietly.
     */
    @Override
    @Test
    @Disabled("Defect: a Cluster application closed during the lock's background connect logs Lettuce's topology "
            + "refresh WARNs (see Javadoc)")
    protected void anApplicationClosedRightAfterItStartedShutsDownWithoutWarnings() {
        super.anApplicationClosedRightAfterItStartedShutsDownWithoutWarnings();
    }
}
