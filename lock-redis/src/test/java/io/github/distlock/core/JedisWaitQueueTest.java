package io.github.distlock.core;

/**
 * {@link WaitQueueTest}'s contract, on a Jedis connection factory and
 * {@code SpringDataLockBackend}.
 */
class JedisWaitQueueTest extends WaitQueueTest {

    @Override
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.JEDIS;
    }

}
