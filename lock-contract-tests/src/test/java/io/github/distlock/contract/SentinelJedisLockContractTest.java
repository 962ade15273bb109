package io.github.distlock.contract;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The contract on a Sentinel-managed master (a master, a replica and three Sentinels)
 * through Jedis, so through the Spring Data backend ({@code SpringDataLockBackend}), with
 * a failover ({@link AbstractSentinelLockContractTest}).
 */
class SentinelJedisLockContractTest extends AbstractSentinelLockContractTest {

    @Override
    protected Set<Capability> capabilities() {
        return EnumSet.of(Capability.MIN_HOLD, Capability.FENCING, Capability.WAIT_QUEUE);
    }

    @Override
    protected List<String> applicationProperties() {
        return List.of("spring.data.redis.client-type=jedis");
    }

}
