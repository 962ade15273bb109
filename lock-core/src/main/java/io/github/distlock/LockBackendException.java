package io.github.distlock;

/**
 * Redis could not be reached, did not answer within {@code distributed-lock.operation-timeout},
 * or answered a lock command with an error. Whether the lock is free is unknown, so the guarded
 * work did not run.
 */
public class LockBackendException extends LockAcquisitionException {

    /**
     * @param key the lock key as the caller gave it
     * @param message what failed
     * @param cause the client's exception
     */
    public LockBackendException(String key, String message, Throwable cause) {
        super(key, message, cause);
    }
}
