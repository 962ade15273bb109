package io.github.distlock;

import java.time.Duration;

/**
 * The lock was written on the Redis master, but fewer replicas than
 * {@code distributed-lock.replica-acks} confirmed it within
 * {@code distributed-lock.replica-ack-timeout}. A failover to a replica that does not
 * have the lock would let a second client take it, so the acquisition was undone (the
 * lock released on the master) and the guarded work did not run.
 *
 * <p>
 * A {@link LockBackendException}: the lock store cannot give a lock that survives a
 * failover right now, so the annotation's failure strategy ({@code onUnavailable} /
 * {@code onFailure}, a failure handler) and the web problem details (503) treat it like
 * an unreachable Redis. Unlike there, the outcome is known: the lock is not held.
 *
 * <pre>{@code
 * try {
 *     lockService.callLocked(LockRequest.of("order:42"), () -> ship(order));
 * }
 * catch (ReplicaAcknowledgementException ex) {
 *     log.warn("{} of {} replicas confirmed the lock on {} in {}", ex.getReceivedAcks(),
 *             ex.getRequestedAcks(), ex.getKey(), ex.getTimeout());
 *     // retry later: a replica is down or lagging
 * }
 * }</pre>
 */
public class ReplicaAcknowledgementException extends LockBackendException {

    private final int requestedAcks;

    private final long receivedAcks;

    private final Duration timeout;

    /**
     * @param key the lock key as the caller gave it
     * @param requestedAcks the replicas that had to confirm
     * ({@code distributed-lock.replica-acks})
     * @param receivedAcks the replicas that did
     * @param timeout how long Redis waited for them
     * ({@code distributed-lock.replica-ack-timeout})
     */
    public ReplicaAcknowledgementException(String key, int requestedAcks, long receivedAcks, Duration timeout) {
        super(key, "Lock " + LockKeys.printable(key) + " was written on the Redis master, but only " + receivedAcks
                + " of the " + requestedAcks + " replica(s) asked for (distributed-lock.replica-acks=" + requestedAcks
                + ") confirmed it within distributed-lock.replica-ack-timeout=" + LockDurations.describe(timeout)
                + "; a failover could lose it, so it was released and is not held. Check that the master has at "
                + "least " + requestedAcks + " connected replica(s) that keep up (INFO replication: connected_slaves, "
                + "lag; the master's min-replicas-to-write), raise replica-ack-timeout, or lower replica-acks.", null);
        this.requestedAcks = requestedAcks;
        this.receivedAcks = receivedAcks;
        this.timeout = timeout;
    }

    /** Redis answered: the lock was written on the master and is released at once. */
    @Override
    public boolean isOutcomeKnown() {
        return true;
    }

    /**
     * The number of replicas that had to confirm the lock
     * ({@code distributed-lock.replica-acks}).
     */
    public int getRequestedAcks() {
        return requestedAcks;
    }

    /** The number of replicas that confirmed it in time. */
    public long getReceivedAcks() {
        return receivedAcks;
    }

    /**
     * How long Redis waited for the confirmations
     * ({@code distributed-lock.replica-ack-timeout}).
     */
    public Duration getTimeout() {
        return timeout;
    }

}
