package io.github.distlock.actuate;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.InspectableLockBackend.NodeReachability;
import io.github.distlock.core.InspectableLockBackend.Reachability;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.NamedLockBackend;

/**
 * Whether locks work in this instance, free of any Spring Boot health API so that each
 * Boot generation's health contributor is a thin adapter around it: up when enough stores
 * answer a ping (one, or a Redlock majority) within their timeout, and the lease watchdog
 * is not lagging.
 *
 * <p>
 * The watchdog lags when its most overdue renewal is behind schedule by more than the
 * limit (the operation timeout: one renewal round never takes longer, so a healthy
 * watchdog is not behind by more). Then leases may run out while their holders still
 * work.
 *
 * <pre>{@code
 * LockBackendHealth.Check check = new LockBackendHealth(backend, watchdog, Duration.ofSeconds(2)).check();
 * boolean up = check.up();   // check.details(): nodes, latency, quorum, watchdog lag
 * }</pre>
 */
public final class LockBackendHealth {

    /** {@code null} for an application whose only stores are named ones. */
    private final @Nullable LockBackend backend;

    private final LeaseWatchdog watchdog;

    private final Duration lagLimit;

    /** The other named backends, each pinged too; empty for an application with one. */
    private final List<NamedLockBackend> others;

    /**
     * @param backend the store; one that is not an {@link InspectableLockBackend} is not
     * pinged
     * @param watchdog the lease watchdog, or {@code null} if there is none to check
     * @param lagLimit how far behind schedule the watchdog may be before it counts as
     * lagging
     */
    public LockBackendHealth(LockBackend backend, LeaseWatchdog watchdog, Duration lagLimit) {
        this(backend, watchdog, lagLimit, List.of());
    }

    /**
     * A check that pings the named backends too: locks work only if each store answers,
     * so one that does not makes the whole check down, and its details say which.
     * @param backend the store of the {@code LockBackend} bean, or {@code null} if the
     * application has only named ones (etcd, ZooKeeper without Redis)
     * @param watchdog its lease watchdog, or {@code null} if there is none to check
     * @param lagLimit how far behind schedule the watchdog may be
     * @param others the {@link NamedLockBackend}s, each with a lock service of its own
     */
    public LockBackendHealth(@Nullable LockBackend backend, LeaseWatchdog watchdog, Duration lagLimit,
            List<NamedLockBackend> others) {
        if (backend == null && others.isEmpty()) {
            throw new IllegalArgumentException("A lock health check needs a backend: a LockBackend or a named one");
        }
        this.backend = backend;
        this.watchdog = watchdog;
        this.lagLimit = Objects.requireNonNull(lagLimit, "lagLimit");
        this.others = List.copyOf(others);
    }

    /**
     * The outcome of one check.
     *
     * @param up whether locks work
     * @param details what was found, for the health endpoint: plain maps, strings and
     * numbers
     */
    public record Check(boolean up, Map<String, Object> details) {
    }

    /**
     * Pings the store and reads the watchdog's lag; never throws for an unreachable
     * store.
     */
    public Check check() {
        Map<String, Object> details = new LinkedHashMap<>();
        boolean up = true;
        if (backend != null) {
            details.put("backend", backend.getClass().getSimpleName());
            up = ping(backend, details);
        }
        if (watchdog != null) {
            Duration lag = watchdog.lag();
            boolean lagging = lag.compareTo(lagLimit) > 0;
            Map<String, Object> watched = new LinkedHashMap<>();
            watched.put("leases", watchdog.watchedLeases());
            watched.put("lagMillis", millis(lag));
            watched.put("lagLimitMillis", lagLimit.toMillis());
            watched.put("lagging", lagging);
            details.put("watchdog", watched);
            up &= !lagging;
        }
        if (!others.isEmpty()) {
            Map<String, Object> named = new LinkedHashMap<>();
            for (NamedLockBackend other : others) {
                Map<String, Object> of = new LinkedHashMap<>();
                of.put("backend", other.backend().getClass().getSimpleName());
                boolean reachable = ping(other.backend(), of);
                of.put("up", reachable);
                named.put(other.name(), of);
                up &= reachable;
            }
            details.put("namedBackends", named);
        }
        return new Check(up, details);
    }

    /**
     * Pings {@code store} if it can be pinged, into {@code details}; whether enough of it
     * answered (true for a store that cannot be pinged).
     */
    private static boolean ping(LockBackend store, Map<String, Object> details) {
        boolean up = true;
        if (store instanceof InspectableLockBackend inspectable) {
            Reachability reachability = inspectable.ping();
            Map<String, Object> nodes = new LinkedHashMap<>();
            for (NodeReachability node : reachability.nodes()) {
                Map<String, Object> of = new LinkedHashMap<>();
                of.put("reachable", node.reachable());
                of.put("latencyMillis", millis(node.latency()));
                if (node.error() != null) {
                    of.put("error", node.error());
                }
                nodes.put(node.node(), of);
            }
            details.put("nodes", nodes);
            details.put("reachableNodes", reachability.reachableNodes());
            details.put("quorum", reachability.quorum());
            up = reachability.reachable();
        }
        else {
            details.put("ping",
                    "not supported: " + store.getClass().getName() + " does not implement InspectableLockBackend");
        }
        return up;
    }

    /** Milliseconds with microsecond precision: a local ping takes well under one. */
    private static double millis(Duration duration) {
        return Math.round(duration.toNanos() / 1_000.0) / 1_000.0;
    }

}
