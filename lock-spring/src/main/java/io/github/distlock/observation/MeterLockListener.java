package io.github.distlock.observation;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import io.github.distlock.core.LockContext;
import io.github.distlock.core.LockListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts what happens to held locks and is not a span of time: hand-overs, watchdog
 * renewals, lost leases and releases, each tagged with the lock's name
 * ({@code lock.name}) and never its key. The counters of a name are registered together
 * when the name is first seen (so a rate query finds a zero rather than no series) and
 * kept, so a lock event costs a map look-up and an increment.
 *
 * <table>
 * <caption>Counters</caption>
 * <tr>
 * <th>name</th>
 * <th>tags besides {@code lock.name}</th>
 * </tr>
 * <tr>
 * <td>{@value #HAND_OVERS}</td>
 * <td>none</td>
 * </tr>
 * <tr>
 * <td>{@value #RENEWALS}</td>
 * <td>{@code outcome}: {@code ok}, {@code failed}</td>
 * </tr>
 * <tr>
 * <td>{@value #LEASES_LOST}</td>
 * <td>{@code reason}: {@code expired-or-taken}, {@code renewal-failed}</td>
 * </tr>
 * <tr>
 * <td>{@value #RELEASES}</td>
 * <td>{@code outcome}: {@code released}, {@code already-gone}, {@code failed}</td>
 * </tr>
 * </table>
 *
 * <pre>{@code
 * LockListener counters = new MeterLockListener(meterRegistry);
 * }</pre>
 */
public class MeterLockListener implements LockListener {

    /**
     * Acquisitions that got the lock handed over by the previous holder's release,
     * through the wait queue.
     */
    public static final String HAND_OVERS = "distributed.lock.handovers";

    /** Watchdog renewals of held leases that answered, by outcome. */
    public static final String RENEWALS = "distributed.lock.renewals";

    /** Held leases lost before release, by reason. */
    public static final String LEASES_LOST = "distributed.lock.leases.lost";

    /**
     * Releases, by outcome: {@code already-gone} means another owner may have run
     * concurrently.
     */
    public static final String RELEASES = "distributed.lock.releases";

    private final MeterRegistry registry;

    /** By backend, then by lock name. */
    private final ConcurrentMap<String, ConcurrentMap<String, NameCounters>> byBackend = new ConcurrentHashMap<>();

    /**
     * @param registry where the counters are registered
     */
    public MeterLockListener(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void acquired(LockContext lock) {
        if (lock.handedOver()) {
            counters(lock).handOvers.increment();
        }
    }

    @Override
    public void renewed(LockContext lock, boolean renewed) {
        NameCounters counters = counters(lock);
        (renewed ? counters.renewalsOk : counters.renewalsFailed).increment();
    }

    @Override
    public void leaseLost(LockContext lock, LeaseLossReason reason, String description) {
        counters(lock).leasesLost[reason.ordinal()].increment();
    }

    @Override
    public void released(LockContext lock, ReleaseOutcome outcome) {
        counters(lock).releases[outcome.ordinal()].increment();
    }

    private NameCounters counters(LockContext lock) {
        String backend = lock.backend();
        ConcurrentMap<String, NameCounters> byName = byBackend.get(backend);
        if (byName == null) {
            byName = byBackend.computeIfAbsent(backend, key -> new ConcurrentHashMap<>());
        }
        String name = lock.name();
        NameCounters found = byName.get(name);
        return found != null ? found : byName.computeIfAbsent(name, key -> new NameCounters(registry, key, backend));
    }

    /** The counters of one lock name. */
    private static final class NameCounters {

        private static final String NAME_TAG = LockObservationDocumentation.LowCardinalityKeyNames.LOCK_NAME.asString();

        private static final String BACKEND_TAG = LockObservationDocumentation.LowCardinalityKeyNames.BACKEND
            .asString();

        final Counter handOvers;

        final Counter renewalsOk;

        final Counter renewalsFailed;

        final Counter[] leasesLost = new Counter[LeaseLossReason.values().length];

        final Counter[] releases = new Counter[ReleaseOutcome.values().length];

        NameCounters(MeterRegistry registry, String name, String backend) {
            handOvers = Counter.builder(HAND_OVERS)
                .tag(NAME_TAG, name)
                .tag(BACKEND_TAG, backend)
                .description("Acquisitions handed over by the previous holder's release")
                .register(registry);
            renewalsOk = renewals(registry, name, backend, "ok");
            renewalsFailed = renewals(registry, name, backend, "failed");
            for (LeaseLossReason reason : LeaseLossReason.values()) {
                leasesLost[reason.ordinal()] = Counter.builder(LEASES_LOST)
                    .tag(NAME_TAG, name)
                    .tag(BACKEND_TAG, backend)
                    .tag("reason", reason.tagValue())
                    .description("Held leases lost before release: the guarded work may have run twice")
                    .register(registry);
            }
            for (ReleaseOutcome outcome : ReleaseOutcome.values()) {
                releases[outcome.ordinal()] = Counter.builder(RELEASES)
                    .tag(NAME_TAG, name)
                    .tag(BACKEND_TAG, backend)
                    .tag("outcome", outcome.tagValue())
                    .description("Releases of held locks, by outcome")
                    .register(registry);
            }
        }

        private static Counter renewals(MeterRegistry registry, String name, String backend, String outcome) {
            return Counter.builder(RENEWALS)
                .tag(NAME_TAG, name)
                .tag(BACKEND_TAG, backend)
                .tag("outcome", outcome)
                .description("Watchdog renewals of held leases, by outcome")
                .register(registry);
        }

    }

}
