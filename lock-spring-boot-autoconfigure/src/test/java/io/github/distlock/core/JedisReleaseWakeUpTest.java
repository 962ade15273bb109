package io.github.distlock.core;

/**
 * {@link ReleaseWakeUpTest}'s contract, on a Jedis connection factory and {@code SpringDataLockBackend}:
 * the release message, delivered through Spring Data's listener container on Jedis's blocking
 * subscription, hands the lock to the waiter without another attempt (no poll).
 */
class JedisReleaseWakeUpTest extends ReleaseWakeUpTest {

    @Override
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.JEDIS;
    }

    /** Each instance's Jedis pool (8 connections at most) grows under 16 threads; never per key. */
    @Override
    long poolGrowth() {
        return 2 * 7;
    }
}
