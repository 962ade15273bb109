package io.github.distlock.observation;

import java.util.function.BiFunction;

import io.github.distlock.observation.LockObservationContext.HoldOutcome;
import io.github.distlock.observation.LockObservationDocumentation.HighCardinalityKeyNames;
import io.github.distlock.observation.LockObservationDocumentation.LowCardinalityKeyNames;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

/**
 * The hold observation's default name ({@code distributed.lock.hold}) and tags:
 * {@code lock.name} throughout, {@code outcome} once it ended, and the key as the
 * high-cardinality {@code lock.key}.
 *
 * <pre>{@code
 * Observation.createNotStarted(custom, new DefaultLockHoldObservationConvention(), () -> context, registry);
 * }</pre>
 */
public class DefaultLockHoldObservationConvention implements LockHoldObservationConvention {

    /** The observation's name, and so the timer's. */
    public static final String NAME = "distributed.lock.hold";

    private static final KeyValue[] OUTCOMES = new KeyValue[HoldOutcome.values().length];

    static {
        for (HoldOutcome outcome : HoldOutcome.values()) {
            OUTCOMES[outcome.ordinal()] = LowCardinalityKeyNames.OUTCOME.withValue(outcome.tagValue());
        }
    }

    private final BiFunction<String, String, LockNameKeyValues> byName = LockNameKeyValues.cache("lock hold",
            OUTCOMES.length);

    @Override
    public String getName() {
        return NAME;
    }

    /** {@code lock hold <lock name>}: the span's name. */
    @Override
    public String getContextualName(LockObservationContext.Hold context) {
        return byName.apply(context.lock().name(), context.lock().backend()).contextualName();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(LockObservationContext.Hold context) {
        LockNameKeyValues tags = byName.apply(context.lock().name(), context.lock().backend());
        HoldOutcome outcome = context.outcome();
        if (outcome == null) {
            // Still held: the long-task timer of active holds gets only the name.
            return tags.nameOnly();
        }
        return tags.ended(outcome.ordinal(), OUTCOMES[outcome.ordinal()]);
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(LockObservationContext.Hold context) {
        return KeyValues.of(HighCardinalityKeyNames.LOCK_KEY.withValue(context.lock().key()));
    }

}
