package io.github.distlock;

/**
 * The lock store could not be reached, did not answer within
 * {@code distributed-lock.operation-timeout}, or answered a lock command with an error.
 * Whether the lock is free is unknown (unless {@link #isOutcomeKnown()} says otherwise),
 * so the guarded work did not run.
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

    /**
     * Whether the store answered, so that the caller knows what the failed call left: a
     * store that refused a lock it had written (too few replicas confirmed it, say)
     * answers this way. The lock service then undoes the write at once, on the caller's
     * thread, instead of retrying the undo in the background as it does for a store that
     * did not answer.
     * @return {@code false} here: the outcome is unknown
     */
    public boolean isOutcomeKnown() {
        return false;
    }

}
