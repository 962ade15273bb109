package io.github.distlock;

import org.jspecify.annotations.Nullable;

/**
 * The lock could not be acquired, so the guarded work did not run. See the subclasses for
 * why.
 */
public class LockAcquisitionException extends RuntimeException {

    private final String key;

    /**
     * @param key the lock key as the caller gave it
     * @param message what went wrong and what to do about it
     * @param cause the underlying failure, if any
     */
    public LockAcquisitionException(String key, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.key = key;
    }

    /** The lock key as the caller gave it (without the prefix). */
    public String getKey() {
        return key;
    }

}
