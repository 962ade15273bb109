package io.github.distlock.benchmarks.adapter;

/**
 * A client that takes locks and keeps them for as long as the caller likes, renewing each
 * lease in the background; used to measure what renewal costs with thousands of locks
 * held at once.
 *
 * <p>
 * Hold and release each lease on the same thread: Redisson and Spring Integration tie a
 * lock to the thread that took it.
 */
public interface LeaseHolder extends AutoCloseable {

    /**
     * Acquires {@code key} without waiting, with the lease length the holder was opened
     * with and renewal on.
     * @param key a key no one else holds
     * @return the held lease
     * @throws LockNotAcquiredException if the key was taken
     */
    Lease hold(String key);

    /** Closes the client; leases still held expire on their own. */
    @Override
    void close();

    /** One held lock. */
    interface Lease {

        /**
         * Releases the lock.
         * @return {@code true} if it was still ours, {@code false} if it had expired or
         * been lost, which means renewal did not keep it alive
         */
        boolean release();

    }

}
