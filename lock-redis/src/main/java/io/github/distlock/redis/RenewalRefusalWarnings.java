package io.github.distlock.redis;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * A WARN when Redis answers a lease renewal with an error ({@code NOPERM} for
 * {@code pexpire}, say): renewals have no caller to throw to, and the leases they lose
 * would otherwise read as "Redis could not be reached" while Redis answers every time.
 * Once a minute per distinct reply, so a watchdog renewing every few hundred milliseconds
 * does not flood the log.
 */
final class RenewalRefusalWarnings {

    private static final Log logger = LogFactory.getLog(RenewalRefusalWarnings.class);

    private static final long INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final String credentials;

    /** When each reply was last logged ({@link System#nanoTime}). */
    private final Map<String, Long> loggedAt = new ConcurrentHashMap<>();

    /**
     * @param credentials where the user and password are set, for the explanation
     */
    RenewalRefusalWarnings(String credentials) {
        this.credentials = credentials;
    }

    /**
     * Logs {@code failure} if it is Redis's error reply and that reply was not logged
     * within the last minute.
     */
    void failed(Throwable failure) {
        Optional<RedisErrorReply> reply = RedisErrorReply.in(failure);
        if (reply.isEmpty()) {
            return; // a timeout or a lost connection: the lost-lease message says so
                    // already
        }
        long now = System.nanoTime();
        Long last = loggedAt.get(reply.get().text());
        if (last != null && now - last < INTERVAL_NANOS) {
            return;
        }
        loggedAt.put(reply.get().text(), now);
        logger.warn("Redis refused to renew leases, so they will be lost although Redis answers: "
                + reply.get().explain(credentials));
    }

}
