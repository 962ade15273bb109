package io.github.distlock.benchmarks.harness;

/**
 * What the contended critical section touches: a counter that it increments
 * non-atomically (read, then write +1) and the id of the last owner. Only the lock keeps
 * two owners from interleaving, so a counter that ends lower than the number of
 * acquisitions proves that the lock let two owners in at once.
 */
public interface SharedResource {

    /**
     * @return the counter
     */
    long counter();

    /**
     * @param value the new counter
     */
    void counter(long value);

    /**
     * @return the owner that held the lock last, or -1
     */
    long lastOwner();

    /**
     * @param owner the owner now holding the lock
     */
    void lastOwner(long owner);

    /**
     * Plain fields in this JVM, for threads of one process. Deliberately neither volatile
     * nor atomic: the lock alone must order the accesses.
     */
    final class InJvm implements SharedResource {

        private long counter;

        private long lastOwner = -1;

        @Override
        public long counter() {
            return counter;
        }

        @Override
        public void counter(long value) {
            counter = value;
        }

        @Override
        public long lastOwner() {
            return lastOwner;
        }

        @Override
        public void lastOwner(long owner) {
            lastOwner = owner;
        }

    }

}
