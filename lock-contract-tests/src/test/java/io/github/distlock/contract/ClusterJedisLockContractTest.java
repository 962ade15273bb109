package io.github.distlock.contract;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The contract on a 3-master Redis Cluster through Jedis, so through the Spring Data
 * backend ({@code SpringDataLockBackend}); the locks of one test spread over the masters.
 */
class ClusterJedisLockContractTest extends AbstractLockContractTest {

    @Override
    protected ContractRedis startRedis() {
        return ClusterRedis.start();
    }

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.MIN_HOLD, Capability.FENCING, Capability.WAIT_QUEUE);
    }

    @Override
    protected List<String> applicationProperties() {
        return List.of("spring.data.redis.client-type=jedis");
    }

}
