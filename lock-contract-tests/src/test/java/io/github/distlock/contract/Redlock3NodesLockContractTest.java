package io.github.distlock.contract;

import java.util.EnumSet;
import java.util.Set;

/**
 * The contract on a Redlock over 3 independent masters
 * ({@code distributed-lock.redlock.nodes}): fencing tokens over the quorum, no wait queue
 * (waiters poll), and no single fault proxy can front 3 servers.
 */
class Redlock3NodesLockContractTest extends AbstractLockContractTest {

    @Override
    protected ContractRedis startRedis() {
        return RedlockRedis.start(3);
    }

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.MIN_HOLD, Capability.FENCING);
    }

}
