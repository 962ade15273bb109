package io.github.distlock.observation;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import org.jspecify.annotations.Nullable;

import io.github.distlock.core.LockContext;
import io.github.distlock.core.LockListener;
import io.github.distlock.observation.LockObservationContext.HoldOutcome;
import io.github.distlock.observation.LockObservationDocumentation.LowCardinalityKeyNames;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * The acquire and hold timers and long-task timers, recorded straight on a
 * {@link MeterRegistry}: the same meters, with the same names and tags, that Micrometer's
 * {@link DefaultMeterObservationHandler} makes of {@link ObservationLockListener}'s two
 * observations with the default conventions ({@code distributed.lock.acquire} and
 * {@code distributed.lock.hold}, each with its {@code .active} long-task timer, and the
 * handler's {@code error} tag), but without the observations.
 *
 * <p>
 * Why: when meters are all the observations would become, the observation machinery is
 * most of the instrumentation's cost. The meter handler builds each timer's id from the
 * observation's key values and looks it up in the registry on every stop, and every
 * observation allocates its context, scope bookkeeping and tag lists: about 5 kB and a
 * few microseconds of CPU per lock, a measurable share of an uncontended lock on a local
 * Redis. Here the meters of a lock name are looked up once and kept, so a lock cycle
 * costs two long-task timer samples, two timer records and one small object. The
 * auto-configuration uses this listener instead of {@link ObservationLockListener} only
 * when the observations could become nothing but these meters (see
 * {@code docs/metrics.md}); never both, so no meter is recorded twice.
 *
 * <pre>{@code
 * LockListener timers = new MeterTimingLockListener(meterRegistry, observationRegistry, true);
 * }</pre>
 */
public class MeterTimingLockListener implements LockListener {

    private static final String LOCK_NAME = LowCardinalityKeyNames.LOCK_NAME.asString();

    private static final String BACKEND = LowCardinalityKeyNames.BACKEND.asString();

    private static final String OUTCOME = LowCardinalityKeyNames.OUTCOME.asString();

    private static final String WAITED = LowCardinalityKeyNames.WAITED.asString();

    private static final String REASON = LowCardinalityKeyNames.REASON.asString();

    /** The tag {@link DefaultMeterObservationHandler} adds to its timers. */
    private static final String ERROR = "error";

    private static final String NO_ERROR = "none";

    /**
     * This listener's state on each {@link LockContext}; a private key, so no other
     * listener collides with it.
     */
    private final Object stateKey = new Object();

    private final MeterRegistry registry;

    private final Clock clock;

    private final boolean longTaskTimers;

    private final boolean timeAcquisitions;

    private final boolean timeHolds;

    /** By backend, then by lock name. */
    private final ConcurrentMap<String, ConcurrentMap<String, NameMeters>> byBackend = new ConcurrentHashMap<>();

    /**
     * @param registry where the meters are registered
     * @param observationRegistry the application's observation registry, asked once,
     * here, whether its predicates let each observation through (Spring Boot's
     * {@code management.observations.enable.*}): a phase whose observation would be off
     * is not timed either; {@code null} to time both
     * @param longTaskTimers whether the {@code .active} long-task timers are kept, as
     * {@code DefaultMeterObservationHandler} keeps them unless told to ignore them
     * (Spring Boot's {@code management.observations.long-task-timer.enabled})
     */
    public MeterTimingLockListener(MeterRegistry registry, @Nullable ObservationRegistry observationRegistry,
            boolean longTaskTimers) {
        this.registry = registry;
        this.clock = registry.config().clock();
        this.longTaskTimers = longTaskTimers;
        this.timeAcquisitions = enabled(observationRegistry, DefaultLockAcquireObservationConvention.NAME);
        this.timeHolds = enabled(observationRegistry, DefaultLockHoldObservationConvention.NAME);
    }

    /**
     * Whether the registry would create a real observation of that name: its predicates
     * see only the name here.
     */
    private static boolean enabled(@Nullable ObservationRegistry observationRegistry, String name) {
        return observationRegistry == null
                || !Observation.createNotStarted(name, Observation.Context::new, observationRegistry).isNoop();
    }

    @Override
    public void acquiring(LockContext lock) {
        if (!timeAcquisitions && !timeHolds) {
            return;
        }
        State state = new State();
        if (timeAcquisitions) {
            NameMeters meters = meters(lock);
            state.acquireStart = clock.monotonicTime();
            state.acquireActive = longTaskTimers ? meters.acquireActive().start() : null;
        }
        lock.put(stateKey, state);
    }

    @Override
    public void acquired(LockContext lock) {
        State state = state(lock);
        if (state == null) {
            return;
        }
        NameMeters meters = meters(lock);
        long now = clock.monotonicTime();
        if (timeAcquisitions) {
            stop(state.acquireActive);
            meters.acquired(lock.waited()).record(now - state.acquireStart, TimeUnit.NANOSECONDS);
        }
        if (timeHolds) {
            state.holdStart = now;
            state.holdActive = longTaskTimers ? meters.holdActive().start() : null;
            // Volatile, and written last: whoever ends the hold, on any thread, then sees
            // the start and the sample.
            state.hold = State.HELD;
        }
    }

    @Override
    public void notAcquired(LockContext lock, AcquireOutcome outcome, @Nullable Throwable cause) {
        State state = state(lock);
        if (state == null || !timeAcquisitions) {
            return;
        }
        long elapsed = clock.monotonicTime() - state.acquireStart;
        stop(state.acquireActive);
        Timer timer = cause == null ? meters(lock).ended(outcome, lock.waited())
                // An exception costs far more than a look-up: this path builds the tag
                // set as the handler would.
                : acquireTimer(registry, lock.name(), lock.backend(), outcome, lock.waited(),
                        cause.getClass().getSimpleName());
        timer.record(elapsed, TimeUnit.NANOSECONDS);
    }

    @Override
    public void leaseLost(LockContext lock, LeaseLossReason reason, String description) {
        endHold(lock, HoldOutcome.LOST);
    }

    @Override
    public void released(LockContext lock, ReleaseOutcome outcome) {
        endHold(lock, HoldOutcome.of(outcome));
    }

    private void endHold(LockContext lock, HoldOutcome outcome) {
        State state = state(lock);
        // The watchdog's listener thread (lost) and the holder (release) may race: the
        // first one ends the hold.
        if (state == null || !State.HOLD.compareAndSet(state, State.HELD, State.ENDED)) {
            return;
        }
        long elapsed = clock.monotonicTime() - state.holdStart;
        stop(state.holdActive);
        meters(lock).held(outcome).record(elapsed, TimeUnit.NANOSECONDS);
    }

    private static void stop(LongTaskTimer.@Nullable Sample sample) {
        if (sample != null) {
            sample.stop();
        }
    }

    private @Nullable State state(LockContext lock) {
        return (State) lock.get(stateKey);
    }

    private NameMeters meters(LockContext lock) {
        String backend = lock.backend();
        ConcurrentMap<String, NameMeters> byName = byBackend.get(backend);
        if (byName == null) {
            byName = byBackend.computeIfAbsent(backend, key -> new ConcurrentHashMap<>());
        }
        String name = lock.name();
        NameMeters found = byName.get(name);
        return found != null ? found : byName.computeIfAbsent(name, key -> new NameMeters(registry, key, backend));
    }

    static Timer acquireTimer(MeterRegistry registry, String name, String backend, AcquireOutcome outcome,
            boolean waited, String error) {
        return Timer.builder(DefaultLockAcquireObservationConvention.NAME)
            .tag(LOCK_NAME, name)
            .tag(BACKEND, backend)
            .tag(OUTCOME, outcome.tagValue())
            .tag(REASON, outcome.reasonTagValue())
            .tag(WAITED, Boolean.toString(waited))
            .tag(ERROR, error)
            .register(registry);
    }

    /** One lock's samples. */
    private static final class State {

        static final int NOT_HELD = 0;

        static final int HELD = 1;

        static final int ENDED = 2;

        static final AtomicIntegerFieldUpdater<State> HOLD = AtomicIntegerFieldUpdater.newUpdater(State.class, "hold");

        /** Written and read on the acquiring thread only. */
        long acquireStart;

        LongTaskTimer.@Nullable Sample acquireActive;

        /** Written before {@link #hold} is set to {@link #HELD}, read after it was. */
        long holdStart;

        LongTaskTimer.@Nullable Sample holdActive;

        /**
         * {@link #NOT_HELD}, then {@link #HELD} when the hold is timed, then
         * {@link #ENDED} by whoever ended it.
         */
        volatile int hold = NOT_HELD;

    }

    /**
     * The meters of one lock name, each looked up once, when first needed: as with the
     * meter handler, a series appears only once a phase started or ended that way (no
     * hold series for a name never acquired). Lazy slots may race; both racers get the
     * same registered meter, so either write is right.
     */
    private static final class NameMeters {

        private static final AcquireOutcome[] ACQUIRE_OUTCOMES = AcquireOutcome.values();

        private static final HoldOutcome[] HOLD_OUTCOMES = HoldOutcome.values();

        private final MeterRegistry registry;

        private final String name;

        private final String backend;

        private @Nullable LongTaskTimer acquireActive;

        private @Nullable LongTaskTimer holdActive;

        /** By outcome ordinal times two, plus one if the caller waited. */
        private final @Nullable Timer[] acquireEnded = new Timer[ACQUIRE_OUTCOMES.length * 2];

        private final @Nullable Timer[] holdEnded = new Timer[HOLD_OUTCOMES.length];

        NameMeters(MeterRegistry registry, String name, String backend) {
            this.registry = registry;
            this.name = name;
            this.backend = backend;
        }

        LongTaskTimer acquireActive() {
            LongTaskTimer active = acquireActive;
            if (active == null) {
                active = active(DefaultLockAcquireObservationConvention.NAME);
                acquireActive = active;
            }
            return active;
        }

        LongTaskTimer holdActive() {
            LongTaskTimer active = holdActive;
            if (active == null) {
                active = active(DefaultLockHoldObservationConvention.NAME);
                holdActive = active;
            }
            return active;
        }

        private LongTaskTimer active(String observationName) {
            return LongTaskTimer.builder(observationName + ".active")
                .tag(LOCK_NAME, name)
                .tag(BACKEND, backend)
                .register(registry);
        }

        Timer acquired(boolean waited) {
            return ended(AcquireOutcome.ACQUIRED, waited);
        }

        Timer ended(AcquireOutcome outcome, boolean waited) {
            int index = outcome.ordinal() * 2 + (waited ? 1 : 0);
            Timer timer = acquireEnded[index];
            if (timer == null) {
                timer = acquireTimer(registry, name, backend, outcome, waited, NO_ERROR);
                acquireEnded[index] = timer;
            }
            return timer;
        }

        Timer held(HoldOutcome outcome) {
            Timer timer = holdEnded[outcome.ordinal()];
            if (timer == null) {
                timer = Timer.builder(DefaultLockHoldObservationConvention.NAME)
                    .tag(LOCK_NAME, name)
                    .tag(BACKEND, backend)
                    .tag(OUTCOME, outcome.tagValue())
                    .tag(ERROR, NO_ERROR)
                    .register(registry);
                holdEnded[outcome.ordinal()] = timer;
            }
            return timer;
        }

    }

}
