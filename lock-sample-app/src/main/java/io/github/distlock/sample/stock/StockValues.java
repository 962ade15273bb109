package io.github.distlock.sample.stock;

import java.time.Duration;

/**
 * What both stock services do the same way: read a counter from Redis, and simulate slow
 * work.
 */
final class StockValues {

    private StockValues() {
    }

    /** A Redis counter's value; a key that does not exist counts as 0. */
    static long parse(String value) {
        return value == null ? 0 : Long.parseLong(value);
    }

    /**
     * Stands in for the slow part of a deduction (a database write, a call out), so that
     * races show.
     */
    static void pause(Duration workDelay) {
        if (workDelay.isZero() || workDelay.isNegative()) {
            return;
        }
        try {
            Thread.sleep(workDelay.toMillis(), workDelay.toNanosPart() % 1_000_000);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while deducting stock", e);
        }
    }

}
