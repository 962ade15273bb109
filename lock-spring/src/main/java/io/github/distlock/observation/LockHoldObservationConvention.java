package io.github.distlock.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and tags the {@link LockObservationDocumentation#LOCK_HOLD hold} observation.
 * Declare a bean of this type to replace {@link DefaultLockHoldObservationConvention}:
 *
 * <pre>{@code
 * &#64;Bean
 * LockHoldObservationConvention holdsWithoutOutcome() {
 *     return new DefaultLockHoldObservationConvention() {
 *         &#64;Override
 *         public KeyValues getLowCardinalityKeyValues(LockObservationContext.Hold context) {
 *             return KeyValues.of("lock.name", context.lock().name());
 *         }
 *     };
 * }
 * }</pre>
 */
public interface LockHoldObservationConvention extends ObservationConvention<LockObservationContext.Hold> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof LockObservationContext.Hold;
    }

}
