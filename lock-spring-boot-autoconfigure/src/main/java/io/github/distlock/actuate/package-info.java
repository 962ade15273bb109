/**
 * Spring Boot Actuator support: the read-only {@code locks} endpoint
 * ({@link io.github.distlock.actuate.LocksEndpoint}) and the {@code distributedLock}
 * health contributor ({@link io.github.distlock.actuate.LockBackendHealth}, adapted to
 * Spring Boot 3's health API by {@code DistributedLockHealthIndicator} and to Boot 4's by
 * {@code DistributedLockBoot4HealthIndicator}). Built on the
 * {@link io.github.distlock.core.LockListener} seam and
 * {@link io.github.distlock.core.InspectableLockBackend}; nothing here ever sees a
 * holder's random token.
 */
package io.github.distlock.actuate;
