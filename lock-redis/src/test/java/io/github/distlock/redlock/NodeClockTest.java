package io.github.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * {@link NodeClock} on readings made up here: what a node's clock may do between two
 * replies, and what counts as a jump.
 */
class NodeClockTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /** The node's clock at JVM time 0: an hour past the epoch, in microseconds. */
    private static final long EPOCH_MICROS = TimeUnit.HOURS.toMicros(1);

    private final NodeClock clock = new NodeClock();

    @Test
    void aClockThatKeepsPaceIsNeverAJumpHoweverSlowTheRepliesAre() {
        assertThat(read(0, 1 * MS, 0)).isZero();
        // A reply that took 900 ms: the node may have read its clock at any point in it.
        assertThat(read(1_000 * MS, 1_900 * MS, 1_000 * MS)).isZero();
        assertThat(read(1_000 * MS, 1_900 * MS, 1_899 * MS)).isZero();
        assertThat(read(60_000 * MS, 60_001 * MS, 60_000 * MS)).isZero();
    }

    @Test
    void aForwardStepBeyondTheToleranceIsAJumpOfAtLeastTheStepLessTheReplysSpan() {
        read(0, 1 * MS, 0);
        read(1_000 * MS, 1_001 * MS, 1_000 * MS);

        long jump = read(2_000 * MS, 2_001 * MS, 2_000 * MS + 5_000 * MS);

        assertThat(jump).isPositive().isGreaterThan(4_990 * MS).isLessThanOrEqualTo(5_000 * MS);
    }

    @Test
    void stepsWithinTheToleranceAndTheDriftOfTheTimeSinceTheLastReadingAreNotJumps() {
        read(0, 0, 0);
        // 10 s later: 10 ms of drift at 1,000 ppm, plus the 2 ms tolerance.
        assertThat(read(10_000 * MS, 10_000 * MS, 10_011 * MS)).isZero();
        assertThat(read(10_001 * MS, 10_001 * MS, 10_001 * MS + 14 * MS)).isPositive();
    }

    @Test
    void aBackwardStepIsNotReportedAndTheClockIsJudgedFromItsNewPace() {
        read(0, 0, 0);
        assertThat(read(1_000 * MS, 1_000 * MS, 1_000 * MS - 30_000 * MS)).isZero();
        // Back to where it was: 30 s ahead of the pace it has kept since the step back.
        assertThat(read(2_000 * MS, 2_000 * MS, 2_000 * MS)).isGreaterThan(29_000 * MS);
    }

    @Test
    void afterAJumpTheNewPaceIsTheReference() {
        read(0, 0, 0);
        assertThat(read(1_000 * MS, 1_000 * MS, 6_000 * MS)).isPositive();
        assertThat(read(2_000 * MS, 2_000 * MS, 7_000 * MS)).isZero();
    }

    @Test
    void aForgottenClockTakesItsNextReadingAsTheReference() {
        read(0, 0, 0);
        clock.forget();
        assertThat(read(1_000 * MS, 1_000 * MS, 90_000 * MS)).isZero();
        assertThat(read(2_000 * MS, 2_000 * MS, 91_000 * MS)).isZero();
    }

    /** Readings that arrive out of order (two I/O threads) are still bounds. */
    @Test
    void anOlderReadingTakenLaterIsNoJump() {
        read(5_000 * MS, 5_001 * MS, 5_000 * MS);
        assertThat(read(1_000 * MS, 1_001 * MS, 1_000 * MS)).isZero();
        assertThat(read(6_000 * MS, 6_001 * MS, 6_000 * MS)).isZero();
    }

    /**
     * @param serverNanos the node's clock less {@link #EPOCH_MICROS}, in nanoseconds
     */
    private long read(long sentNanos, long receivedNanos, long serverNanos) {
        return clock.forwardJump(sentNanos, receivedNanos, EPOCH_MICROS + TimeUnit.NANOSECONDS.toMicros(serverNanos));
    }

}
