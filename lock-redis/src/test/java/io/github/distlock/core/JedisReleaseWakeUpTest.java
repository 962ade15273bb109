package io.github.distlock.core;

/**
 * {@link ReleaseWakeUpTest}'s contract, on a Jedis connection factory and
 * {@code SpringDataLockBackend}: the release message, delivered through Spring Data's
 * listener container on Jedis's blocking subscription, hands the lock to the waiter
 * without another attempt (no poll).
 */
class JedisReleaseWakeUpTest extends ReleaseWakeUpTest {

    @Override
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.JEDIS;
    }

    /**
     * Each instance's Jedis pool (8 connections at most) grows under 16 threads; never
     * per key.
     */
    @Override
    long poolGrowth() {
        return 2 * 7;
    }

    /**
     * Twenty thousand (1,250 per thread): the registry and the queue scripts are the ones
     * {@link ReleaseWakeUpTest} already takes through a hundred thousand keys on Lettuce;
     * what is Jedis's own here (the pool, the listener container's one subscription) is
     * per connection, not per key, and a leak in it shows within a few keys. The other
     * 80,000 took no path the first 20,000 do not take, and cost about 30 s of every
     * build.
     */
    @Override
    int distinctKeys() {
        return 20_000;
    }

}
