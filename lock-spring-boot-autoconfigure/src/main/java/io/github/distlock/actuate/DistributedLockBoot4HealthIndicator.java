package io.github.distlock.actuate;

import java.util.Objects;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The {@code distributedLock} health contributor on Spring Boot 4's health API
 * ({@code org.springframework.boot.health.contributor}, in {@code spring-boot-health}):
 * the same check as {@link DistributedLockHealthIndicator} on Boot 3, {@code UP} when the
 * lock store answers within its timeout (for Redlock: a majority of the nodes) and the
 * lease watchdog is not lagging, {@code DOWN} otherwise, with the details of
 * {@link LockBackendHealth}.
 *
 * <pre>{@code
 * management.health.distributed-lock.enabled=false   # to leave it out
 * }</pre>
 */
public class DistributedLockBoot4HealthIndicator extends AbstractHealthIndicator {

    private final LockBackendHealth health;

    /**
     * @param health the check this indicator reports
     */
    public DistributedLockBoot4HealthIndicator(LockBackendHealth health) {
        super("Distributed lock health check failed");
        this.health = Objects.requireNonNull(health, "health");
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        LockBackendHealth.Check check = health.check();
        (check.up() ? builder.up() : builder.down()).withDetails(check.details());
    }

}
