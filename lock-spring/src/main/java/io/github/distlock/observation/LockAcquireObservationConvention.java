package io.github.distlock.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and tags the {@link LockObservationDocumentation#LOCK_ACQUIRE acquire}
 * observation. Declare a bean of this type to replace
 * {@link DefaultLockAcquireObservationConvention}, typically by extending it:
 *
 * <pre>{@code
 * &#64;Bean
 * LockAcquireObservationConvention tenantTaggedAcquisitions() {
 *     return new DefaultLockAcquireObservationConvention() {
 *         &#64;Override
 *         public KeyValues getLowCardinalityKeyValues(LockObservationContext.Acquire context) {
 *             return super.getLowCardinalityKeyValues(context).and("region", region);
 *         }
 *     };
 * }
 * }</pre>
 */
public interface LockAcquireObservationConvention extends ObservationConvention<LockObservationContext.Acquire> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof LockObservationContext.Acquire;
    }

}
