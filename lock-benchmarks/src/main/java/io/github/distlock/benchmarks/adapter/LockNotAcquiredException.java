package io.github.distlock.benchmarks.adapter;

/**
 * The lock was still held by another owner when the wait ran out. The harnesses count
 * these as timeouts; they are not errors of the implementation.
 */
public class LockNotAcquiredException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param key the lock that was not acquired
     */
    public LockNotAcquiredException(String key) {
        super("lock '" + key + "' was not acquired within the wait time", null, false, false);
    }

}
