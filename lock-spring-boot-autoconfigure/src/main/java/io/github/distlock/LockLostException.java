package io.github.distlock;

/**
 * The guarded work finished, but its lock was lost before it did: for part of the time another
 * instance may have run the same work. Thrown after the method returns, so the caller can check or
 * compensate (for example with the fencing token).
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
