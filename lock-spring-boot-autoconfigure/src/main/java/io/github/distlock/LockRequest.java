package io.github.distlock;

import java.time.Duration;

/**
 * What to lock and for how long. Immutable; {@code null} fields fall back to the configured
 * defaults.
 *
 * <pre>{@code
 * LockRequest request = LockRequest.of("invoice:" + id)
 *         .withTtl(Duration.ofSeconds(10))
 *         .withWaitTime(Duration.ofMillis(500))
 *         .withWatchdog(false);   // fixed lease: expires after 10 s even if still working
 * }</pre>
 *
 * @param key the lock name, for example {@code "order:42"}; stored as {@code <key-prefix>{key}}
 * @param ttl the lease length, or {@code null} for {@code distributed-lock.default-ttl}
 * @param waitTime how long to wait for the current holder, or {@code null} for
 *        {@code distributed-lock.default-wait-time}
 * @param watchdog whether to renew the lease until release, or {@code null} for
 *        {@code distributed-lock.watchdog.enabled}
 */
public record LockRequest(String key, Duration ttl, Duration waitTime, Boolean watchdog) {

    /** A request for {@code key} with every option at its configured default. */
    public static LockRequest of(String key) {
        return new LockRequest(key, null, null, null);
    }

    /** A copy with the given lease length ({@code null}: the default). */
    public LockRequest withTtl(Duration ttl) {
        return new LockRequest(key, ttl, waitTime, watchdog);
    }

    /** A copy with the given wait time ({@code null}: the default; zero: try once). */
    public LockRequest withWaitTime(Duration waitTime) {
        return new LockRequest(key, ttl, waitTime, watchdog);
    }

    /** A copy that renews the lease until release ({@code true}) or keeps it fixed ({@code false}). */
    public LockRequest withWatchdog(Boolean watchdog) {
        return new LockRequest(key, ttl, waitTime, watchdog);
    }
}
