/**
 * Lock metrics and traces through Micrometer, built on the
 * {@link io.github.distlock.core.LockListener} seam.
 *
 * <p>
 * Two {@link io.micrometer.observation.Observation}s per lock
 * ({@link LockObservationDocumentation}): the acquisition and the hold. With a
 * {@code MeterRegistry} behind the {@code ObservationRegistry} (as Spring Boot's Actuator
 * configures it) each yields a timer and a long-task timer, and with a tracer a span.
 * What is counted rather than timed (renewals, lost leases, hand-overs, releases) are
 * plain counters ({@link MeterLockListener}). When the observations could only become
 * those timers (no tracer, only Micrometer's default meter handler),
 * {@link MeterTimingLockListener} records the same timers directly instead, at a fraction
 * of the cost. Metric tags are low-cardinality only: the lock's name, never its per-call
 * key, which goes to traces alone.
 *
 * <p>
 * Non-null unless marked {@code @Nullable}.
 */
@NullMarked
package io.github.distlock.observation;

import org.jspecify.annotations.NullMarked;
