package io.github.distlock.core;

/**
 * A {@link LockBackend} that issues fencing tokens: per lock, each token is larger than
 * every token issued to earlier holders and smaller than every token of later ones. A
 * holder passes its token to the resource it protects, which refuses writes carrying a
 * token lower than one it has seen, and so a holder that paused past its lease cannot
 * overwrite its successor's work.
 *
 * <pre>{@code
 * if (backend instanceof FencingLockBackend fencing) {
 *     long token = fencing.issueFencingToken(key, holderToken, ttlMillis);   // 0: no longer ours
 * }
 * }</pre>
 */
public interface FencingLockBackend extends LockBackend {

    /**
     * Issues the next fencing token of the lock, but only if it still holds
     * {@code token}: a token drawn while the lock is ours orders exactly like one drawn
     * with the acquisition.
     * @param key the lock
     * @param token the value the lock must still hold
     * @param ttlMillis the lock's lease in milliseconds; the fencing counter outlives it
     * @return the fencing token ({@code > 0}), or 0 if the lock no longer holds
     * {@code token}
     */
    long issueFencingToken(LockKey key, String token, long ttlMillis);

}
