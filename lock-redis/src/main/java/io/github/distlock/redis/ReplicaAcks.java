package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

import io.github.distlock.ReplicaAcknowledgementException;
import io.github.distlock.core.LockKey;

/**
 * How many replicas must confirm a lock write with {@code WAIT}, and for how long Redis
 * may wait for them ({@code distributed-lock.replica-acks} and
 * {@code distributed-lock.replica-ack-timeout}).
 *
 * <p>
 * {@code WAIT} counts the replicas that have applied the writes of the connection it runs
 * on, up to that connection's last write. So a backend confirms a lock by writing it once
 * more on the connection that then sends {@code WAIT}: {@code renew.lua} for the lock and
 * its token, whose {@code PEXPIRE} comes after the lock's own write (or hand-over) in the
 * master's replication stream. A replica that has applied it has applied the lock too,
 * whichever connection wrote the lock.
 *
 * <pre>{@code
 * new LettuceLockBackend(factory, Duration.ofSeconds(2), "lock:released", new ReplicaAcks(1, Duration.ofSeconds(1)));
 * }</pre>
 *
 * @param replicas the replicas that must confirm; 0 sends no {@code WAIT}
 * @param timeout how long one {@code WAIT} may block, at least 1 ms
 */
public record ReplicaAcks(int replicas, Duration timeout) {

    /** No confirmation: writes count once the master has them (Redis's default). */
    public static final ReplicaAcks NONE = new ReplicaAcks(0, Duration.ofSeconds(1));

    /**
     * @throws IllegalArgumentException if {@code replicas} is negative or {@code timeout}
     * is under 1 ms (a {@code WAIT} timeout of 0 blocks for ever)
     */
    public ReplicaAcks {
        Objects.requireNonNull(timeout, "timeout");
        if (replicas < 0) {
            throw new IllegalArgumentException("distributed-lock.replica-acks must not be negative, was " + replicas);
        }
        if (timeout.toMillis() < 1) {
            throw new IllegalArgumentException(
                    "distributed-lock.replica-ack-timeout must be at least 1ms, was " + timeout);
        }
    }

    /** Whether lock writes are confirmed at all. */
    public boolean enabled() {
        return replicas > 0;
    }

    /** {@code numreplicas} of {@code WAIT}. */
    byte[] replicasArgument() {
        return Integer.toString(replicas).getBytes(StandardCharsets.US_ASCII);
    }

    /** {@code timeout} of {@code WAIT}, in milliseconds. */
    byte[] timeoutArgument() {
        return Long.toString(timeout.toMillis()).getBytes(StandardCharsets.US_ASCII);
    }

    /** Whether {@code acknowledged} replicas (a {@code WAIT} reply) are enough. */
    boolean satisfiedBy(long acknowledged) {
        return acknowledged >= replicas;
    }

    /**
     * @throws ReplicaAcknowledgementException if {@code acknowledged} replicas are too
     * few for the write of {@code key} to count
     */
    void require(LockKey key, long acknowledged) {
        if (!satisfiedBy(acknowledged)) {
            throw new ReplicaAcknowledgementException(key.name(), replicas, acknowledged, timeout);
        }
    }
}
