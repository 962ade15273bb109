package io.github.distlock.actuate;

import java.util.Objects;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The {@code distributedLock} health contributor (Spring Boot 3's health API): {@code UP}
 * when the lock store answers within its timeout (for Redlock: a majority of the nodes)
 * and the lease watchdog is not lagging, {@code DOWN} otherwise; the details say which
 * nodes answered, how fast, and how far behind the watchdog is
 * ({@link LockBackendHealth}).
 *
 * <pre>{@code
 * management.health.distributed-lock.enabled=false   # to leave it out
 * }</pre>
 */
public class DistributedLockHealthIndicator extends AbstractHealthIndicator {

    private final LockBackendHealth health;

    /**
     * @param health the check this indicator reports
     */
    public DistributedLockHealthIndicator(LockBackendHealth health) {
        super("Distributed lock health check failed");
        this.health = Objects.requireNonNull(health, "health");
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        LockBackendHealth.Check check = health.check();
        (check.up() ? builder.up() : builder.down()).withDetails(check.details());
    }

}
