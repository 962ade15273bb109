package io.github.distlock.redis;

import java.time.Duration;
import java.util.concurrent.TimeoutException;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.LockKey;

/**
 * What a failed lock command says, and what kind of failure it was, in one place for both
 * transports ({@link LettuceTransport}, {@link SpringDataTransport}), so that a user
 * reads the same sentence whichever driver runs the lock.
 *
 * <pre>{@code
 * throw LockCommandErrors.noAnswer(key, "release", LockCommandErrors.bound("distributed-lock.operation-timeout",
 *         timeout), ex);
 * // Redis did not answer the release of lock 'order:42' ('lock:{order:42}') within
 * // distributed-lock.operation-timeout=PT2S. Is Redis reachable?
 * }</pre>
 */
final class LockCommandErrors {

    /** The property that bounds every lock command of a single-Redis backend. */
    static final String OPERATION_TIMEOUT = "distributed-lock.operation-timeout";

    private LockCommandErrors() {
    }

    /**
     * How a call is bounded, for messages:
     * {@code distributed-lock.operation-timeout=PT2S}.
     */
    static String bound(String timeoutProperty, Duration timeout) {
        return timeoutProperty + "=" + timeout;
    }

    /**
     * The bound of a replica confirmation: the network's, plus what {@code WAIT} may
     * block.
     */
    static String confirmationBound(String timeoutProperty, Duration timeout, ReplicaAcks acks) {
        return bound(timeoutProperty, timeout) + " plus distributed-lock.replica-ack-timeout=" + acks.timeout();
    }

    /**
     * No reply within the bound: the command may have run all the same, and the caller
     * undoes it.
     */
    static LockBackendException noAnswer(LockKey key, String operation, String bound, Throwable cause) {
        return new LockBackendException(key.name(), "Redis did not answer the " + operation + " of lock "
                + key.printableName() + " (" + key.printableStoreKey() + ") within " + bound + ". Is Redis reachable?",
                cause);
    }

    /**
     * Redis answered with an error, or the command failed on the way: in words that say
     * what to fix.
     */
    static LockBackendException failed(LockKey key, String operation, Throwable cause, String credentials) {
        return new LockBackendException(key.name(), "Redis failed the " + operation + " of lock " + key.printableName()
                + " (" + key.printableStoreKey() + "): " + RedisErrorReply.describe(cause, credentials), cause);
    }

    /** The connection did not open in time, or failed to open: nothing was sent. */
    static LockBackendException notConnected(LockKey key, String operation, String bound, Throwable cause,
            String credentials) {
        String why = cause instanceof TimeoutException ? " within " + bound + ". Is Redis reachable?"
                : ": " + RedisErrorReply.describe(cause, credentials);
        return new LockBackendException(key.name(),
                "Could not connect to Redis for the " + operation + " of lock " + key.printableName() + why, cause);
    }

    /**
     * {@code WAIT} answered on another server connection than the one that wrote the lock
     * (the client reconnected in between), so its count says nothing about our write.
     */
    static LockBackendException replicaCountUnknown(LockKey key) {
        return new LockBackendException(key.name(),
                "The connection to Redis was re-established while lock " + key.printableName()
                        + " was being confirmed by its replicas, so WAIT may not have counted "
                        + "its write; the lock is not counted as held.",
                null);
    }

    /**
     * Why a call failed, for the health check: without a lock's name, which a ping does
     * not have.
     */
    static String inPlainWords(Throwable cause, String bound, String credentials) {
        if (cause instanceof TimeoutException) {
            return "no answer within " + bound;
        }
        return RedisErrorReply.describe(cause, credentials);
    }

    /**
     * What a Cluster refuses for the moment, so that sending it again soon succeeds:
     * {@code TRYAGAIN} (a multi-key command while its slot is half-way through a
     * migration) and {@code CLUSTERDOWN} (during a failover). Read from the causes of a
     * {@link LockBackendException} only: its own message names the lock, which may hold
     * any word.
     */
    static boolean isClusterRefusal(Throwable failure) {
        return causeSays(failure, "TRYAGAIN") || causeSays(failure, "CLUSTERDOWN");
    }

    /**
     * Redis 6.2 refuses {@code SET ... NX ... GET}: a syntax error, so the command did
     * nothing.
     */
    static boolean isSyntaxError(Throwable failure) {
        return causeSays(failure, "syntax error");
    }

    /**
     * Whether {@code failure} or one of its causes, by its message, says {@code text}.
     */
    static boolean says(Throwable failure, String text) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains(text)) {
                return true;
            }
        }
        return false;
    }

    private static boolean causeSays(Throwable failure, String text) {
        Throwable reply = failure instanceof LockBackendException && failure.getCause() != failure ? failure.getCause()
                : failure;
        return reply != null && says(reply, text);
    }

}
