package io.github.distlock;

/**
 * A lock this instance believed it held was lost: for part of the time another instance
 * may have run the same work. Thrown after a guarded method whose lease was lost, so the
 * caller can check or compensate (for example with the fencing token), and by
 * {@link LockHandle#fencingToken()} when no token can be drawn because the lock is no
 * longer ours.
 */
public class LockLostException extends RuntimeException {

    private final String key;

    /**
     * @param key the lock's key
     * @param message what happened and where
     */
    public LockLostException(String key, String message) {
        super(message);
        this.key = key;
    }

    /** The lock's key as the application named it. */
    public String getKey() {
        return key;
    }

}
