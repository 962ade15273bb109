package io.github.distlock.redlock;

import java.util.concurrent.TimeUnit;

/**
 * Whether one Redlock node's clock jumped forward, from the clock readings in its
 * replies.
 *
 * <p>
 * A node expires keys by its wall clock, so a forward jump expires the leases it granted
 * early, and a lock that a majority held may be held by less than one. To this JVM the
 * node's clock is an offset from {@link System#nanoTime}, which does not jump: each reply
 * read between sending and receiving bounds that offset from both sides, and the offsets
 * seen before bound where it can be now, give or take the rate at which two clocks may
 * drift apart ({@link #DRIFT_RATE}) and a small {@link #TOLERANCE_NANOS}. A reading above
 * the highest offset the node's clock can have reached is a jump, however slow or stalled
 * the replies were; a slow reply only widens its bounds. A backward jump makes leases
 * last longer there, never shorter, and is not reported.
 *
 * <pre>{@code
 * NodeClock clock = new NodeClock();
 * long jumpedNanos = clock.forwardJump(sentNanos, System.nanoTime(), serverMicros);
 * if (jumpedNanos > 0) {
 *     // hold the node's votes back: it may have let go of leases early
 * }
 * }</pre>
 */
final class NodeClock {

    /**
     * How fast two clocks may drift apart: 1,000 ppm, twice the fastest rate at which NTP
     * slews a clock.
     */
    static final double DRIFT_RATE = 0.001;

    /**
     * A step this small is not reported: it is within the constant part of the drift
     * allowance that every lease's validity leaves (2 ms).
     */
    static final long TOLERANCE_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    /** Whether a reading has been seen. */
    private boolean known;

    /**
     * The lowest upper bound on the node's clock less this JVM's {@code nanoTime} seen
     * since the last jump, in nanoseconds.
     */
    private long highestOffset;

    /** When {@link #highestOffset} was seen, as a {@code nanoTime}. */
    private long highestOffsetAt;

    /**
     * Takes one reading of the node's clock.
     * @param sentNanos {@code nanoTime} before the command that read it was sent
     * @param receivedNanos {@code nanoTime} when its reply arrived
     * @param serverMicros the node's clock, microseconds since the epoch
     * @return by how many nanoseconds the node's clock is ahead of where it could have
     * been without a jump, or 0 if it is not
     */
    synchronized long forwardJump(long sentNanos, long receivedNanos, long serverMicros) {
        long server = TimeUnit.MICROSECONDS.toNanos(serverMicros);
        long lowest = server - receivedNanos;
        long highest = server - sentNanos;
        if (!known) {
            known = true;
            remember(highest, receivedNanos);
            return 0;
        }
        long reachable = highestOffset + drift(receivedNanos - highestOffsetAt) + TOLERANCE_NANOS;
        if (lowest - reachable > 0) {
            // A jump: what was seen before says nothing about the clock from now on.
            remember(highest, receivedNanos);
            return lowest - reachable;
        }
        if (highest - (highestOffset + drift(receivedNanos - highestOffsetAt)) < 0) {
            remember(highest, receivedNanos);
        }
        return 0;
    }

    /**
     * Forgets what was seen: the address leads to another server now, whose clock is its
     * own.
     */
    synchronized void forget() {
        known = false;
    }

    private void remember(long offset, long at) {
        highestOffset = offset;
        highestOffsetAt = at;
    }

    private static long drift(long elapsedNanos) {
        return (long) (Math.max(0, elapsedNanos) * DRIFT_RATE);
    }

}
