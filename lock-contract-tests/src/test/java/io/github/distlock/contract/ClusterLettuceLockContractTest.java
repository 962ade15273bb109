package io.github.distlock.contract;

import java.util.EnumSet;
import java.util.Set;

/**
 * The contract on a 3-master Redis Cluster through Lettuce; the locks of one test spread
 * over the masters.
 */
class ClusterLettuceLockContractTest extends AbstractLockContractTest {

    @Override
    protected ContractRedis startRedis() {
        return ClusterRedis.start();
    }

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.MIN_HOLD, Capability.FENCING, Capability.WAIT_QUEUE, Capability.CLIENT_RESENDS);
    }

}
