package io.github.distlock.contract;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The contract on a single Redis server through Jedis, so through the Spring Data backend
 * ({@code SpringDataLockBackend}), with faults from a proxy in front of it.
 */
class StandaloneJedisLockContractTest extends AbstractLockContractTest {

    @Override
    protected ContractRedis startRedis() {
        return StandaloneRedis.start();
    }

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.MIN_HOLD, Capability.FENCING, Capability.WAIT_QUEUE, Capability.FAULT_PROXY);
    }

    @Override
    protected List<String> applicationProperties() {
        return List.of("spring.data.redis.client-type=jedis");
    }

}
