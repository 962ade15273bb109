package io.github.distlock.core;

/** {@link ReleaseWakeUpTest}'s contract, on a Jedis connection factory and {@code SpringDataLockBackend}. */
class JedisReleaseWakeUpTest extends ReleaseWakeUpTest {

    @Override
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.JEDIS;
    }
}
