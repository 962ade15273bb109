package io.github.distlock.core;

/**
 * {@link ReplicaAcknowledgementTest}'s contract on a Jedis connection factory and
 * {@code SpringDataLockBackend}: the lock write and its {@code WAIT} share one borrowed
 * pooled connection.
 */
class JedisReplicaAcknowledgementTest extends ReplicaAcknowledgementTest {

    @Override
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.JEDIS;
    }

}
