package io.github.distlock.etcd;

import java.util.EnumSet;
import java.util.Set;

import io.github.distlock.contract.AbstractLockContractTest;
import io.github.distlock.contract.Capability;
import io.github.distlock.contract.ContractStore;

/**
 * The whole contract on the etcd backend, against a 3-member cluster of real {@code etcd}
 * processes, with two application instances each connected through its own client. It has
 * fencing tokens (the key's create revision) and the wait queue (keys in create order).
 * The fault-proxy tests are skipped: they put a Redis protocol proxy between an instance
 * and Redis, and etcd's faults are {@link EtcdFaultTest}'s instead.
 */
class EtcdLockContractTest extends AbstractLockContractTest {

    @Override
    protected ContractStore startStore() {
        return EtcdContractStore.start();
    }

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.FENCING, Capability.WAIT_QUEUE);
    }

}
