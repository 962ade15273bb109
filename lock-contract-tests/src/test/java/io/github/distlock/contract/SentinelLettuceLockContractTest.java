package io.github.distlock.contract;

import java.util.EnumSet;
import java.util.Set;

/** The contract on a Sentinel-managed master through Lettuce, found through three Sentinels. */
class SentinelLettuceLockContractTest extends AbstractLockContractTest {

    @Override
    protected ContractRedis startRedis() {
        return SentinelRedis.start();
    }

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.FENCING, Capability.WAIT_QUEUE);
    }
}
