package io.github.distlock;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The one set of rules for a lock's ttl and wait time, applied wherever one is given: the
 * {@link DistributedLock @DistributedLock} attributes and the
 * {@code distributed-lock.default-*} properties when the application starts, and each
 * {@link LockService} call. So a value that passes the startup never fails a call.
 *
 * <ul>
 * <li>A ttl is at least {@link #MIN_TTL} (1 ms): Redis keeps leases in whole milliseconds
 * ({@code SET ... PX}), so a shorter one would be no lease at all. A remainder below a
 * millisecond is dropped ({@code 1500us} is a 1 ms lease), which errs on the safe side:
 * this JVM never believes it holds the lock longer than Redis does.</li>
 * <li>A ttl is at most {@link #MAX_TTL} (36500 days, 100 years): this JVM times a lease
 * in nanoseconds ({@code System.nanoTime()}), which cannot span 292 years; the bound
 * leaves a wide margin.</li>
 * <li>A wait time is zero (try once) or positive, and at most {@link #MAX_WAIT_TIME}, for
 * the same reason.</li>
 * </ul>
 *
 * <pre>{@code
 * long ttlMillis = LockDurations.requireValidTtl("order:42", ttl);   // throws IllegalArgumentException
 * String problem = LockDurations.ttlProblem(Duration.ofNanos(500));   // "is shorter than 1ms, ..."
 * }</pre>
 */
public final class LockDurations {

    /** The shortest lease: Redis keeps leases in whole milliseconds. */
    public static final Duration MIN_TTL = Duration.ofMillis(1);

    /**
     * The longest lease: 36500 days (100 years), well within what a nanosecond clock can
     * time (292 years).
     */
    public static final Duration MAX_TTL = Duration.ofDays(36_500);

    /**
     * The longest wait, bounded like {@link #MAX_TTL}: a deadline is kept in nanoseconds.
     */
    public static final Duration MAX_WAIT_TIME = Duration.ofDays(36_500);

    private LockDurations() {
    }

    /**
     * What is wrong with a ttl, as the rest of a sentence that starts with its name ("ttl
     * = "1ns" is shorter than..."), or {@code null} if it is valid. Callers add the fix
     * that fits where the value came from.
     * @param ttl the lease length, or {@code null} (a problem: missing)
     * @return the problem, or {@code null}
     */
    public static @Nullable String ttlProblem(@Nullable Duration ttl) {
        if (ttl == null) {
            return "is missing, but a lease needs a length.";
        }
        if (ttl.isZero() || ttl.isNegative()) {
            return "is not positive, but a lease needs a length.";
        }
        if (ttl.compareTo(MIN_TTL) < 0) {
            return "is shorter than 1ms, the shortest lease there is: Redis keeps leases in whole milliseconds.";
        }
        if (ttl.compareTo(MAX_TTL) > 0) {
            return "is longer than 36500d (100 years), the longest lease this library can time: it measures leases "
                    + "in nanoseconds, which cannot span 292 years.";
        }
        return null;
    }

    /**
     * What is wrong with a wait time, like {@link #ttlProblem(Duration)}, or {@code null}
     * if it is valid.
     * @param waitTime how long to wait for the current holder; zero tries once;
     * {@code null} is missing
     * @return the problem, or {@code null}
     */
    public static @Nullable String waitTimeProblem(@Nullable Duration waitTime) {
        if (waitTime == null) {
            return "is missing.";
        }
        if (waitTime.isNegative()) {
            return "is negative.";
        }
        if (waitTime.compareTo(MAX_WAIT_TIME) > 0) {
            return "is longer than 36500d (100 years), the longest wait this library can time: it keeps deadlines "
                    + "in nanoseconds, which cannot span 292 years.";
        }
        return null;
    }

    /**
     * Checks a ttl at call time and returns it in whole milliseconds, the unit Redis
     * keeps leases in.
     * @param lockName the lock's key, for the message
     * @param ttl the lease length, with the configured default already filled in;
     * {@code null} fails as missing
     * @return the ttl in milliseconds, sub-millisecond remainder dropped; between 1 and
     * {@code MAX_TTL}
     * @throws IllegalArgumentException naming the lock, the value and the allowed range
     */
    public static long requireValidTtl(String lockName, @Nullable Duration ttl) {
        String problem = ttlProblem(ttl);
        if (problem != null || ttl == null) {
            throw new IllegalArgumentException("The ttl of lock '" + lockName + "' (" + describe(ttl) + ") " + problem
                    + " Pass a ttl from 1ms to 36500d, such as Duration.ofSeconds(30), or null for "
                    + "distributed-lock.default-ttl.");
        }
        return ttl.toMillis();
    }

    /**
     * Checks a wait time at call time.
     * @param lockName the lock's key, for the message
     * @param waitTime the wait, with the configured default already filled in;
     * {@code null} fails as missing
     * @return {@code waitTime}
     * @throws IllegalArgumentException naming the lock, the value and the allowed range
     */
    public static Duration requireValidWaitTime(String lockName, @Nullable Duration waitTime) {
        String problem = waitTimeProblem(waitTime);
        if (problem != null || waitTime == null) {
            // "must not be negative" kept word for word: callers and tests have matched
            // on it.
            throw new IllegalArgumentException("The wait time of lock '" + lockName + "' (" + describe(waitTime) + ") "
                    + problem + " It must not be negative or longer than 36500d: pass Duration.ZERO to try "
                    + "once, a wait such as Duration.ofSeconds(3), or null for distributed-lock.default-wait-time.");
        }
        return waitTime;
    }

    /**
     * A duration the way it would be written in a property, in the largest unit that
     * expresses it exactly: {@code 1ns}, {@code 500us}, {@code 1500ms}, {@code 30s},
     * {@code 36500d}.
     * @param duration the duration, or {@code null}
     * @return the text, {@code "null"} for {@code null}
     */
    public static String describe(@Nullable Duration duration) {
        if (duration == null) {
            return "null";
        }
        if (duration.getSeconds() == Long.MIN_VALUE) {
            return duration.toString(); // no absolute value
        }
        String sign = duration.isNegative() ? "-" : "";
        Duration abs = duration.abs();
        long seconds = abs.getSeconds();
        int nanos = abs.getNano();
        if (nanos != 0) {
            // Below a second: the smallest unit that keeps it exact, as long as it fits a
            // long.
            if (seconds > Long.MAX_VALUE / 1_000_000_000L - 1) {
                return duration.toString();
            }
            long total = seconds * 1_000_000_000L + nanos;
            if (total % 1_000_000 == 0) {
                return sign + total / 1_000_000 + "ms";
            }
            if (total % 1_000 == 0) {
                return sign + total / 1_000 + "us";
            }
            return sign + total + "ns";
        }
        if (seconds % 86_400 == 0 && seconds != 0) {
            return sign + seconds / 86_400 + "d";
        }
        if (seconds % 3_600 == 0 && seconds != 0) {
            return sign + seconds / 3_600 + "h";
        }
        if (seconds % 60 == 0 && seconds != 0) {
            return sign + seconds / 60 + "m";
        }
        return sign + seconds + "s";
    }

}
