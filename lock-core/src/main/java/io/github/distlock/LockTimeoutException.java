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
        super(key, "Lock " + LockKeys.printable(key) + " is held by another owner; not acquired within wait time "
                + waitTime + ". Retry later, or raise the wait time (waitTime / distributed-lock.default-wait-time).",
                null);
        this.waitTime = waitTime;
    }

    /**
     * For a lock that Redis granted but whose lease had already run out when the reply
     * could be used (this JVM or Redis stalled for longer than the ttl): nobody else held
     * it, the ttl was too short for the stall. The acquisition was undone.
     * @param key the lock key
     * @param waitTime the wait time the caller gave
     * @param ttl the lease asked for
     * @param tookMillis how long the acquisition took until its reply could be used
     */
    public LockTimeoutException(String key, Duration waitTime, Duration ttl, long tookMillis) {
        super(key, "Lock " + LockKeys.printable(key) + " was granted, but its lease of " + ttl.toMillis()
                + " ms had run out by the time the reply could be used (" + tookMillis + " ms after the call began): "
                + "this JVM or Redis stalled for longer than the ttl. It was given back; no other owner held it. "
                + "Raise the ttl well above the longest stall you expect (GC pauses, a loaded machine).", null);
        this.waitTime = waitTime;
    }

    /** How long the caller waited before giving up. */
    public Duration getWaitTime() {
        return waitTime;
    }

}
