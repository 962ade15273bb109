package io.github.distlock.autoconfigure.web;

import java.time.Duration;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Settings of the web integration, under {@code distributed-lock.web.*}. Checked at startup; a bad value fails the
 * startup with a message naming the property.
 */
@ConfigurationProperties(prefix = DistributedLockWebProperties.PREFIX)
public class DistributedLockWebProperties implements InitializingBean {

    /** The configuration prefix. */
    public static final String PREFIX = "distributed-lock.web";

    private final ProblemDetails problemDetails = new ProblemDetails();

    public ProblemDetails getProblemDetails() {
        return problemDetails;
    }

    @Override
    public void afterPropertiesSet() {
        validate();
    }

    /**
     * Checks every value.
     *
     * @throws InvalidConfigurationPropertyValueException naming the property, the value and the fix
     */
    public void validate() {
        requireNotNegative("busy-retry-after", problemDetails.busyRetryAfter);
        requireNotNegative("unavailable-retry-after", problemDetails.unavailableRetryAfter);
    }

    private static void requireNotNegative(String name, Duration value) {
        if (value == null || value.isNegative()) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".problem-details." + name, value,
                    "The duration may not be negative. Use a duration such as 1s, or 0s to send no Retry-After.");
        }
    }

    /** Lock failures in web requests as RFC 9457 problem-detail responses. */
    public static class ProblemDetails {

        /**
         * Whether a lock failure in a Spring MVC or WebFlux request is answered with a problem detail (409 when the
         * lock is busy, 503 when the lock store is unavailable, 500 when the lease was lost) instead of an error.
         */
        private boolean enabled = true;

        /**
         * Retry-After of a 409 (another request held the lock for the whole wait time), rounded up to whole seconds.
         * Zero sends no Retry-After.
         */
        private Duration busyRetryAfter = Duration.ofSeconds(1);

        /**
         * Retry-After of a 503 (the lock store could not be reached), rounded up to whole seconds. Zero sends no
         * Retry-After.
         */
        private Duration unavailableRetryAfter = Duration.ofSeconds(5);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getBusyRetryAfter() {
            return busyRetryAfter;
        }

        public void setBusyRetryAfter(Duration busyRetryAfter) {
            this.busyRetryAfter = busyRetryAfter;
        }

        public Duration getUnavailableRetryAfter() {
            return unavailableRetryAfter;
        }

        public void setUnavailableRetryAfter(Duration unavailableRetryAfter) {
            this.unavailableRetryAfter = unavailableRetryAfter;
        }
    }
}
