package io.github.distlock.observation;

import java.util.function.BiFunction;

import io.github.distlock.core.LockListener.AcquireOutcome;
import io.github.distlock.observation.LockObservationDocumentation.HighCardinalityKeyNames;
import io.github.distlock.observation.LockObservationDocumentation.LowCardinalityKeyNames;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

/**
 * The acquire observation's default name ({@code distributed.lock.acquire}) and tags:
 * {@code lock.name} throughout, {@code outcome}, {@code reason} and {@code waited} once
 * it ended, and the key as the high-cardinality {@code lock.key}.
 *
 * <pre>{@code
 * Observation.createNotStarted(custom, new DefaultLockAcquireObservationConvention(), () -> context, registry);
 * }</pre>
 */
public class DefaultLockAcquireObservationConvention implements LockAcquireObservationConvention {

    /** The observation's name, and so the timer's. */
    public static final String NAME = "distributed.lock.acquire";

    private static final KeyValue[] OUTCOMES = new KeyValue[AcquireOutcome.values().length];

    private static final KeyValue[] REASONS = new KeyValue[AcquireOutcome.values().length];

    private static final KeyValue WAITED = LowCardinalityKeyNames.WAITED.withValue("true");

    private static final KeyValue AT_ONCE = LowCardinalityKeyNames.WAITED.withValue("false");

    static {
        for (AcquireOutcome outcome : AcquireOutcome.values()) {
            OUTCOMES[outcome.ordinal()] = LowCardinalityKeyNames.OUTCOME.withValue(outcome.tagValue());
            REASONS[outcome.ordinal()] = LowCardinalityKeyNames.REASON.withValue(outcome.reasonTagValue());
        }
    }

    private final BiFunction<String, String, LockNameKeyValues> byName = LockNameKeyValues.cache("lock acquire",
            OUTCOMES.length * 2);

    @Override
    public String getName() {
        return NAME;
    }

    /** {@code lock acquire <lock name>}: the span's name. */
    @Override
    public String getContextualName(LockObservationContext.Acquire context) {
        return byName.apply(context.lock().name(), context.lock().backend()).contextualName();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(LockObservationContext.Acquire context) {
        LockNameKeyValues tags = byName.apply(context.lock().name(), context.lock().backend());
        AcquireOutcome outcome = context.outcome();
        if (outcome == null) {
            // Still acquiring: the long-task timer gets only the name, as nothing else is
            // known yet.
            return tags.nameOnly();
        }
        boolean waited = context.lock().waited();
        return tags.ended(outcome.ordinal() * 2 + (waited ? 1 : 0), OUTCOMES[outcome.ordinal()],
                REASONS[outcome.ordinal()], waited ? WAITED : AT_ONCE);
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(LockObservationContext.Acquire context) {
        return KeyValues.of(HighCardinalityKeyNames.LOCK_KEY.withValue(context.lock().key()));
    }

}
