package io.github.distlock.contract;

import java.util.EnumSet;
import java.util.Set;

/**
 * The contract on a single Redis server through Lettuce, with faults from a proxy in
 * front of it.
 */
class StandaloneLettuceLockContractTest extends AbstractLockContractTest {

    @Override
    protected ContractRedis startRedis() {
        return StandaloneRedis.start();
    }

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.MIN_HOLD, Capability.FENCING, Capability.WAIT_QUEUE, Capability.FAULT_PROXY,
                Capability.CLIENT_RESENDS);
    }

}
