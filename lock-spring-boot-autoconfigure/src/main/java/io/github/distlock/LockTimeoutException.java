package io.github.distlock;

import java.time.Duration;

/**
 * Another owner still held the lock when the wait time ran out.
 */
public class LockTimeoutException extends LockAcquisitionException {

    private final Duration waitTime;

    /**
     * @param key the lock key as the caller gave it
     * @param waitTime how long the caller waited
     */
    public LockTimeoutException(String key, Duration waitTime) {
        super(key, "Lock " + LockKeys.printable(key) + " is held by another owner; not acquired within wait time " + waitTime
                + ". Retry later, or raise the wait time (waitTime / distributed-lock.default-wait-time).", null);
        this.waitTime = waitTime;
    }

    /** How long the caller waited before giving up. */
    public Duration getWaitTime() {
        return waitTime;
    }
}
