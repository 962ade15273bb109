package io.github.distlock.contract;

/**
 * Where a backend keeps a lock in Redis: all the contract suite knows of the wire format,
 * for its side door (delete a lock behind its holder's back, see whether anything is
 * left, count the waiters). The wire format itself is tested in its own classes.
 */
public interface LockKeyspace {

    /**
     * The single-Redis backend with the default prefix {@code lock:}: the lock
     * {@code order:42} is the string key {@code lock:{order:42}}, its waiters the sorted
     * set {@code lock:{order:42}:queue}, its fencing counter
     * {@code lock:{order:42}:fence}. Names with braces are encoded; the contract uses
     * none.
     */
    LockKeyspace SINGLE_REDIS = new LockKeyspace() {

        @Override
        public String lockKey(String name) {
            return "lock:{" + name + "}";
        }

        @Override
        public String queueKey(String name) {
            return lockKey(name) + ":queue";
        }

        @Override
        public String statePattern(String name) {
            return lockKey(name) + "*";
        }

        @Override
        public boolean isCounter(String redisKey) {
            return redisKey.endsWith(":fence");
        }
    };

    /**
     * The key that holds the lock {@code name}: deleting it takes the lock from its
     * holder.
     */
    String lockKey(String name);

    /**
     * The sorted set of the waiters for {@code name}, for backends with
     * {@link Capability#WAIT_QUEUE}.
     */
    String queueKey(String name);

    /** A {@code SCAN MATCH} pattern for every key of lock {@code name}. */
    String statePattern(String name);

    /**
     * Whether a key of {@link #statePattern} is a counter that outlives its holders on
     * purpose (the fencing counter) rather than state a holder or waiter leaves behind.
     */
    boolean isCounter(String redisKey);

}
