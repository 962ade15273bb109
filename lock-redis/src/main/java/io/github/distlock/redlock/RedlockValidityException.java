package io.github.distlock.redlock;

import java.time.Duration;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.LockKey;

/**
 * A majority of the Redlock nodes granted the lock, but the vote took so long that, with
 * the clock-drift allowance, nothing was left of the ttl: the lock would have expired
 * before it could be used, so it was given back. Nobody else holds it; the ttl is too
 * short for the time a vote takes (the slowest node's answer, which
 * {@code distributed-lock.redlock.node-timeout} bounds). Like every
 * {@link io.github.distlock.LockBackendException}, the guarded method does not run.
 *
 * <pre>{@code
 * catch (RedlockValidityException ex) {
 *     log.warn("A Redlock vote took {} ms of a {} ms ttl", ex.elapsedMillis(), ex.ttlMillis());
 * }
 * }</pre>
 */
public class RedlockValidityException extends LockBackendException {

    private final long elapsedMillis;

    private final long ttlMillis;

    RedlockValidityException(LockKey key, int granted, int nodes, long elapsedMillis, long driftMillis, long ttlMillis,
            Duration nodeTimeout) {
        super(key.name(), granted + " of " + nodes + " Redlock nodes granted lock " + key.printableName()
                + ", a majority, but the vote took " + elapsedMillis + " ms, which with the clock-drift allowance of "
                + driftMillis + " ms used up the whole ttl of " + ttlMillis + " ms: the lock would have expired before "
                + "it could be used, so it was given back (no other owner holds it). Raise the ttl (ttl / "
                + "distributed-lock.default-ttl) well above the time a vote can take, or lower "
                + "distributed-lock.redlock.node-timeout (" + nodeTimeout.toMillis() + " ms), which bounds how long a "
                + "vote waits for the slowest node.", null);
        this.elapsedMillis = elapsedMillis;
        this.ttlMillis = ttlMillis;
    }

    /** How long the vote took, in milliseconds. */
    public long elapsedMillis() {
        return elapsedMillis;
    }

    /** The ttl asked for, in milliseconds. */
    public long ttlMillis() {
        return ttlMillis;
    }

}
