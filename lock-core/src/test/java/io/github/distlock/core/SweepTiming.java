package io.github.distlock.core;

import java.time.Duration;
import java.util.Random;

/**
 * The durations of one sweep case: leases, waits, and the lengths of its fault. The
 * default sweep uses {@link #fixed}; the long sweep draws them at random, so faults land
 * at every point of an operation.
 *
 * @param operationTimeout distributed-lock.operation-timeout of both instances
 * @param ttl the lease of locks taken in the case
 * @param renewedTtl the lease of the lock whose renewal is faulted (renewed every third
 * of it)
 * @param waitTime how long a queued caller waits
 * @param giveUpWaitTime how long a caller waits that is meant to give up
 * @param shortDelay a reply delay within the operation timeout
 * @param longDelay a reply delay past the operation timeout
 * @param outage how long a hang, blackhole or pause lasts before it heals
 * @param resetProbeDelay how long the targeted reply is held before the connections are
 * reset under it
 * @param outageOffset how long after the moment just before the target command an outage
 * starts
 * @param shots how many matching commands a per-command fault hits (more than one hits
 * re-sends too)
 */
record SweepTiming(Duration operationTimeout, Duration ttl, Duration renewedTtl, Duration waitTime,
        Duration giveUpWaitTime, Duration shortDelay, Duration longDelay, Duration outage, Duration resetProbeDelay,
        Duration outageOffset, int shots) {

    /**
     * Scheduling slack on a busy 2-core CI machine, added to the bounds the invariants
     * set. The ttl is long enough that a key left behind would outlive bound plus slack,
     * so the slack cannot hide one.
     */
    static final Duration SLACK = Duration.ofMillis(500);

    /** The default sweep: each fault squarely on its command. */
    static SweepTiming fixed(Duration operationTimeout) {
        return new SweepTiming(operationTimeout, Duration.ofSeconds(3), Duration.ofMillis(900), Duration.ofMillis(1500),
                Duration.ofMillis(400), operationTimeout.dividedBy(2), operationTimeout.multipliedBy(2),
                operationTimeout.multipliedBy(3).dividedBy(2), operationTimeout.dividedBy(3), Duration.ZERO, 1);
    }

    /**
     * The long sweep: every duration drawn from {@code random}. Leases may be shorter
     * than a delayed reply, so a reply can arrive after the lease it grants has run out.
     */
    static SweepTiming random(Duration operationTimeout, Random random) {
        long timeout = operationTimeout.toMillis();
        return new SweepTiming(operationTimeout,
                millis(random.nextInt(4) == 0 ? between(random, 50, 400) : between(random, 600, 4000)),
                millis(between(random, 300, 1500)), millis(between(random, 200, 2500)),
                millis(between(random, 50, 900)), millis(between(random, 5, timeout * 95 / 100)),
                millis(between(random, timeout * 105 / 100, timeout * 4)),
                millis(between(random, timeout / 5, timeout * 4)), millis(between(random, 2, timeout * 9 / 10)),
                millis(between(random, 0, timeout)), 1 + random.nextInt(3));
    }

    /** How often the watchdog renews a lease of {@code lease}. */
    static Duration renewalPeriod(Duration lease) {
        return lease.dividedBy(3);
    }

    /**
     * How long after the faults healed a key may still be held by a token no live handle
     * owns: one operation timeout plus one renewal period (the invariant), plus
     * scheduling slack.
     */
    Duration orphanBound() {
        return operationTimeout.plus(renewalPeriod(ttl)).plus(SLACK);
    }

    /** The longest any single call of the case may take without counting as blocked. */
    Duration callBound() {
        return waitTime.plus(operationTimeout.multipliedBy(4)).plus(outage).plus(Duration.ofSeconds(3));
    }

    private static long between(Random random, long from, long to) {
        return to <= from ? from : from + (long) (random.nextDouble() * (to - from));
    }

    private static Duration millis(long millis) {
        return Duration.ofMillis(millis);
    }

    @Override
    public String toString() {
        return "ttl=" + ttl.toMillis() + "ms renewedTtl=" + renewedTtl.toMillis() + "ms wait=" + waitTime.toMillis()
                + "ms giveUpWait=" + giveUpWaitTime.toMillis() + "ms shortDelay=" + shortDelay.toMillis()
                + "ms longDelay=" + longDelay.toMillis() + "ms outage=" + outage.toMillis() + "ms resetProbe="
                + resetProbeDelay.toMillis() + "ms outageOffset=" + outageOffset.toMillis() + "ms shots=" + shots;
    }
}
