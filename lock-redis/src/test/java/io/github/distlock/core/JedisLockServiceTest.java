package io.github.distlock.core;

/**
 * {@link RedisLockServiceTest}'s contract, on a Jedis connection factory and
 * {@code SpringDataLockBackend}.
 */
class JedisLockServiceTest extends RedisLockServiceTest {

    @Override
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.JEDIS;
    }

}
