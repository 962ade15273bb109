package io.github.distlock.contract;

import java.util.EnumSet;
import java.util.Set;

/**
 * The contract on a Sentinel-managed master through Lettuce, with a failover
 * ({@link AbstractSentinelLockContractTest}).
 */
class SentinelLettuceLockContractTest extends AbstractSentinelLockContractTest {

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.MIN_HOLD, Capability.FENCING, Capability.WAIT_QUEUE, Capability.CLIENT_RESENDS);
    }

}
