package io.github.distlock.redis;

import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.LockKey;

/**
 * A fencing backend whose counter can be raised to a given value: what a node of a
 * Redlock needs, and a single store never does. A token drawn from a majority of nodes is
 * the largest of their counters; a Redlock writes it back to a majority before it hands
 * the token out, so that every later holder's majority has seen it
 * ({@code io.github.distlock.redlock.QuorumFencing}).
 *
 * <pre>{@code
 * if (node instanceof RaisableFencingLockBackend raisable) {
 *     boolean stillOurs = raisable.raiseFencingCounter(key, token, largestToken, ttlMillis);
 * }
 * }</pre>
 */
public interface RaisableFencingLockBackend extends FencingLockBackend {

    /**
     * Raises the lock's fencing counter to at least {@code fencingToken}, but only if the
     * lock still holds {@code token}.
     * @param key the lock
     * @param token the value the lock must still hold
     * @param fencingToken the value the counter must reach
     * @param ttlMillis the lock's lease in milliseconds; the fencing counter outlives it
     * @return {@code true} if the counter is now at least {@code fencingToken},
     * {@code false} if the lock no longer holds {@code token}
     */
    boolean raiseFencingCounter(LockKey key, String token, long fencingToken, long ttlMillis);

}
