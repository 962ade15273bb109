package io.github.distlock.aop;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockDurations;
import io.github.distlock.LockKeys;

/**
 * The WARN of calls skipped because the lock store was unavailable
 * ({@code onUnavailable = SKIP}): at most one per {@link #WINDOW} and lock name, saying
 * how many calls of that lock were skipped without a warning since the previous one. A
 * skip for a busy lock is the ordinary "skip if locked" and is not logged here; a skip
 * for a store that is down means no instance runs the work, which must not go unnoticed,
 * yet a scheduled job on every instance must not flood the log either.
 *
 * <p>
 * Lock names are few (they are metric tags), so one entry per name is kept for the
 * application's life.
 */
final class SkipWarnings {

    /** The shortest time between two WARNs of one lock name. */
    static final Duration WINDOW = Duration.ofMinutes(1);

    private final Log logger;

    private final ConcurrentMap<String, PerLock> byName = new ConcurrentHashMap<>();

    /**
     * Replaceable so that a test can move time on instead of sleeping through the window.
     */
    private volatile InstantSource clock = InstantSource.system();

    SkipWarnings(Log logger) {
        this.logger = logger;
    }

    void useClock(InstantSource clock) {
        this.clock = clock;
    }

    /**
     * A call of {@code operation} was skipped because the store was unavailable: warns,
     * unless this lock name warned less than {@link #WINDOW} ago, in which case the call
     * is only counted for the next warning.
     */
    void skippedUnavailable(LockOperation operation, String key, LockAcquisitionException cause) {
        if (!logger.isWarnEnabled()) {
            return;
        }
        PerLock state = byName.computeIfAbsent(operation.getName(), name -> new PerLock());
        Instant now = clock.instant();
        Instant previous;
        long unwarned;
        // Short and never blocking inside: a store that is down already makes these calls
        // slow.
        synchronized (state) {
            previous = state.lastWarning;
            if (previous != null && now.isBefore(previous.plus(WINDOW))) {
                state.unwarned++;
                return;
            }
            unwarned = state.unwarned;
            state.unwarned = 0;
            state.lastWarning = now;
        }
        logger.warn(message(operation, key, cause, previous, unwarned, now));
    }

    private static String message(LockOperation operation, String key, LockAcquisitionException cause,
            @Nullable Instant previous, long unwarned, Instant now) {
        StringBuilder text = new StringBuilder("Skipped ").append(operation.describeMethod())
            .append(" without running it: the lock store could not be reached or failed, so lock '")
            .append(operation.getName())
            .append("' (key ")
            .append(LockKeys.printable(key))
            .append(") could not be had, and the method skips then (its onUnavailable resolves to SKIP). No ")
            .append("instance that uses this store runs the work until it is back. Cause: ")
            .append(cause.getMessage());
        if (previous != null) {
            text.append(" ")
                .append(unwarned)
                .append(unwarned == 1 ? " more call" : " more calls")
                .append(" of lock '")
                .append(operation.getName())
                .append("' skipped for this reason in the ")
                .append(LockDurations.describe(Duration.ofSeconds(Duration.between(previous, now).getSeconds())))
                .append(" since the previous warning.");
        }
        text.append(" This warning repeats at most once a minute per lock. To make such calls fail instead, set ")
            .append("onUnavailable = THROW on the method, or distributed-lock.on-unavailable=throw for methods ")
            .append("that set neither onUnavailable nor onFailure.");
        return text.toString();
    }

    /** One lock name's warning state; guarded by itself. */
    private static final class PerLock {

        @Nullable Instant lastWarning;

        long unwarned;

    }

}
