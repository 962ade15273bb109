package io.github.distlock.zookeeper;

import java.util.EnumSet;
import java.util.Set;

import io.github.distlock.contract.AbstractLockContractTest;
import io.github.distlock.contract.Capability;
import io.github.distlock.contract.ContractStore;

/**
 * The whole contract on ZooKeeper: two application instances, each with its own client
 * and session, on a real three-member ensemble of separate processes. It has fencing
 * tokens (the holder node's czxid), a wait queue (the sequential nodes, each waiter
 * watching its predecessor) and minimum holds and {@code extend} (the holder keeps its
 * node and deletes it when the cut or set lease ends). {@link Capability#FAULT_PROXY} and
 * {@link Capability#CLIENT_RESENDS} are about a Redis proxy and a Redis client's
 * re-sends, so their tests do not apply; the ZooKeeper faults (a leader killed, a
 * minority and a majority down, a client paused past its session) are
 * {@code ZooKeeperFaultTest}'s.
 */
class ZooKeeperLockContractTest extends AbstractLockContractTest {

    @Override
    protected ContractStore startStore() {
        return ZooKeeperContractStore.start();
    }

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.FENCING, Capability.WAIT_QUEUE, Capability.MIN_HOLD);
    }

}
