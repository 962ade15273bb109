package io.github.distlock.contract;

import java.util.EnumSet;
import java.util.Set;

/**
 * The contract on the in-memory backend, declared as an application's {@code LockBackend}
 * bean: two application instances share one store, as two instances share one Redis. It
 * has the wait queue and fencing tokens; the fault tests need a Redis between the
 * instance and its store and are skipped.
 */
class InMemoryLockContractTest extends AbstractLockContractTest {

    @Override
    protected ContractStore startStore() {
        return InMemoryContractStore.start();
    }

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.MIN_HOLD, Capability.FENCING, Capability.WAIT_QUEUE);
    }

}
