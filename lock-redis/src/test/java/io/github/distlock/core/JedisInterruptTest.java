package io.github.distlock.core;

/**
 * {@link InterruptTest} on a Jedis connection factory and {@code SpringDataLockBackend}:
 * Jedis calls block in socket reads, so the backend waits for them on its own threads,
 * through interrupts.
 */
class JedisInterruptTest extends InterruptTest {

    @Override
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.JEDIS;
    }

}
