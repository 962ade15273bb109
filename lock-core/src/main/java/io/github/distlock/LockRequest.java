package io.github.distlock;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * What to lock and for how long. Immutable; {@code null} fields fall back to the
 * configured defaults.
 *
 * <pre>{@code
 * LockRequest request = LockRequest.of("invoice:" + id)
 *         .withTtl(Duration.ofSeconds(10))
 *         .withWaitTime(Duration.ofMillis(500))
 *         .withWatchdog(false);   // fixed lease: expires after 10 s even if still working
 * }</pre>
 *
 * @param key the lock name, for example {@code "order:42"}; stored as
 * {@code <key-prefix>{key}}; not blank, and at most
 * {@code distributed-lock.max-key-length} characters ({@link LockKeys})
 * @param ttl the lease length, or {@code null} for {@code distributed-lock.default-ttl}
 * @param waitTime how long to wait for the current holder, or {@code null} for
 * {@code distributed-lock.default-wait-time}
 * @param watchdog whether to renew the lease until release, or {@code null} for
 * {@code distributed-lock.watchdog.enabled}
 * @param fencingToken whether to issue the fencing token together with the lock;
 * otherwise it is issued on the first {@link LockHandle#fencingToken()} call
 * @param name what metrics, traces and the Actuator call this kind of lock, for example
 * {@code "invoice-export"}; {@code null} for {@value #UNNAMED}. Unlike the key it must
 * not vary per call: it becomes a metric tag, and a tag per order id would make a time
 * series per order. {@code @DistributedLock} sets its {@code name}, or
 * {@code Class.method}.
 * @param skipOn when the caller skips its work rather than fail if it does not get the
 * lock; changes nothing about the acquisition, only how it is counted: such a failed
 * acquisition ends with the {@code skipped} outcome in metrics instead of {@code timeout}
 * or {@code backend-error}. {@code null} means {@link SkipOn#NEVER}.
 * @param minHold the least time the lock stays held, counted from its acquisition, even
 * if released sooner ({@link #withMinHold}); {@code null} or zero for none
 * @param backend the name of the store that keeps the lock ({@link #withBackend}), or
 * {@code null} for {@code distributed-lock.backend}
 * @param expiryReported whether a fixed lease that runs out before its release is
 * reported as a lost lock ({@link #withExpiryReported}); {@code null} for the caller's
 * default: no for {@code lock} and {@code tryLock}, yes for {@code @DistributedLock}
 */
public record LockRequest(String key, @Nullable Duration ttl, @Nullable Duration waitTime, @Nullable Boolean watchdog,
        boolean fencingToken, @Nullable String name, SkipOn skipOn, @Nullable Duration minHold,
        @Nullable String backend, @Nullable Boolean expiryReported) {

    /** The {@link #name()} of requests that give none. */
    public static final String UNNAMED = "unnamed";

    /**
     * The canonical constructor, which every other one calls.
     * @param key the lock name
     * @param ttl the lease length, or {@code null} for the default
     * @param waitTime the wait, or {@code null} for the default
     * @param watchdog whether to renew the lease, or {@code null} for the default
     * @param fencingToken whether to issue the fencing token together with the lock
     * @param name the name for metrics, traces and the Actuator, or {@code null} for
     * {@value #UNNAMED}
     * @param skipOn when the caller skips rather than fails; {@code null} means
     * {@link SkipOn#NEVER}, so {@link #skipOn()} is never {@code null}
     * @param minHold the least time the lock stays held, or {@code null} for none
     * @param backend the store's name, or {@code null} for the default one
     * @param expiryReported whether a fixed lease that runs out before its release is
     * reported lost, or {@code null} for the caller's default
     */
    public LockRequest(String key, @Nullable Duration ttl, @Nullable Duration waitTime, @Nullable Boolean watchdog,
            boolean fencingToken, @Nullable String name, @Nullable SkipOn skipOn, @Nullable Duration minHold,
            @Nullable String backend, @Nullable Boolean expiryReported) {
        this.key = key;
        this.ttl = ttl;
        this.waitTime = waitTime;
        this.watchdog = watchdog;
        this.fencingToken = fencingToken;
        this.name = name;
        this.skipOn = (skipOn != null ? skipOn : SkipOn.NEVER);
        this.minHold = minHold;
        this.backend = backend;
        this.expiryReported = expiryReported;
    }

    /**
     * A request whose fixed lease, if it runs out before the release, is reported lost as
     * the caller's default says.
     * @param key the lock name
     * @param ttl the lease length, or {@code null} for the default
     * @param waitTime the wait, or {@code null} for the default
     * @param watchdog whether to renew the lease, or {@code null} for the default
     * @param fencingToken whether to issue the fencing token together with the lock
     * @param name the name for metrics, traces and the Actuator, or {@code null} for
     * {@value #UNNAMED}
     * @param skipOn when the caller skips rather than fails; {@code null} means
     * {@link SkipOn#NEVER}
     * @param minHold the least time the lock stays held, or {@code null} for none
     * @param backend the store's name, or {@code null} for the default one
     */
    public LockRequest(String key, @Nullable Duration ttl, @Nullable Duration waitTime, @Nullable Boolean watchdog,
            boolean fencingToken, @Nullable String name, @Nullable SkipOn skipOn, @Nullable Duration minHold,
            @Nullable String backend) {
        this(key, ttl, waitTime, watchdog, fencingToken, name, skipOn, minHold, backend, null);
    }

    /**
     * A request on the default backend.
     * @param key the lock name
     * @param ttl the lease length, or {@code null} for the default
     * @param waitTime the wait, or {@code null} for the default
     * @param watchdog whether to renew the lease, or {@code null} for the default
     * @param fencingToken whether to issue the fencing token together with the lock
     * @param name the name for metrics, traces and the Actuator, or {@code null} for
     * {@value #UNNAMED}
     * @param skipOn when the caller skips rather than fails; {@code null} means
     * {@link SkipOn#NEVER}
     * @param minHold the least time the lock stays held, or {@code null} for none
     */
    public LockRequest(String key, @Nullable Duration ttl, @Nullable Duration waitTime, @Nullable Boolean watchdog,
            boolean fencingToken, @Nullable String name, @Nullable SkipOn skipOn, @Nullable Duration minHold) {
        this(key, ttl, waitTime, watchdog, fencingToken, name, skipOn, minHold, null);
    }

    /**
     * A request without a minimum hold.
     * @param key the lock name
     * @param ttl the lease length, or {@code null} for the default
     * @param waitTime the wait, or {@code null} for the default
     * @param watchdog whether to renew the lease, or {@code null} for the default
     * @param fencingToken whether to issue the fencing token together with the lock
     * @param name the name for metrics, traces and the Actuator, or {@code null} for
     * {@value #UNNAMED}
     * @param skipOn when the caller skips rather than fails; {@code null} means
     * {@link SkipOn#NEVER}
     */
    public LockRequest(String key, @Nullable Duration ttl, @Nullable Duration waitTime, @Nullable Boolean watchdog,
            boolean fencingToken, @Nullable String name, @Nullable SkipOn skipOn) {
        this(key, ttl, waitTime, watchdog, fencingToken, name, skipOn, null);
    }

    /**
     * A request whose caller fails (rather than skips) when it does not get the lock.
     * @param key the lock name
     * @param ttl the lease length, or {@code null} for the default
     * @param waitTime the wait, or {@code null} for the default
     * @param watchdog whether to renew the lease, or {@code null} for the default
     * @param fencingToken whether to issue the fencing token together with the lock
     * @param name the name for metrics, traces and the Actuator, or {@code null} for
     * {@value #UNNAMED}
     */
    public LockRequest(String key, @Nullable Duration ttl, @Nullable Duration waitTime, @Nullable Boolean watchdog,
            boolean fencingToken, @Nullable String name) {
        this(key, ttl, waitTime, watchdog, fencingToken, name, SkipOn.NEVER);
    }

    /**
     * A request without a name.
     * @param key the lock name
     * @param ttl the lease length, or {@code null} for the default
     * @param waitTime the wait, or {@code null} for the default
     * @param watchdog whether to renew the lease, or {@code null} for the default
     * @param fencingToken whether to issue the fencing token together with the lock
     */
    public LockRequest(String key, @Nullable Duration ttl, @Nullable Duration waitTime, @Nullable Boolean watchdog,
            boolean fencingToken) {
        this(key, ttl, waitTime, watchdog, fencingToken, null);
    }

    /**
     * A request without the fencing token up front, the usual case.
     * @param key the lock name
     * @param ttl the lease length, or {@code null} for the default
     * @param waitTime the wait, or {@code null} for the default
     * @param watchdog whether to renew the lease, or {@code null} for the default
     */
    public LockRequest(String key, @Nullable Duration ttl, @Nullable Duration waitTime, @Nullable Boolean watchdog) {
        this(key, ttl, waitTime, watchdog, false, null);
    }

    /** A request for {@code key} with every option at its configured default. */
    public static LockRequest of(String key) {
        return new LockRequest(key, null, null, null, false, null);
    }

    /** A copy with the given lease length ({@code null}: the default). */
    public LockRequest withTtl(@Nullable Duration ttl) {
        return new LockRequest(key, ttl, waitTime, watchdog, fencingToken, name, skipOn, minHold, backend,
                expiryReported);
    }

    /** A copy with the given wait time ({@code null}: the default; zero: try once). */
    public LockRequest withWaitTime(@Nullable Duration waitTime) {
        return new LockRequest(key, ttl, waitTime, watchdog, fencingToken, name, skipOn, minHold, backend,
                expiryReported);
    }

    /**
     * A copy that renews the lease until release ({@code true}), keeps it fixed
     * ({@code false}), or follows {@code distributed-lock.watchdog.enabled}
     * ({@code null}).
     */
    public LockRequest withWatchdog(@Nullable Boolean watchdog) {
        return new LockRequest(key, ttl, waitTime, watchdog, fencingToken, name, skipOn, minHold, backend,
                expiryReported);
    }

    /**
     * A copy whose acquisition also issues the fencing token, in the same round trip, for
     * callers that always pass it on. Without it the token is issued on the first
     * {@link LockHandle#fencingToken()} call, one round trip more, which callers that
     * never read it never pay.
     *
     * <pre>{@code
     * try (LockHandle lock = lockService.lock(LockRequest.of("ledger:" + id).withFencingToken())) {
     *     ledger.post(entry, lock.fencingToken());   // already there: no round trip
     * }
     * }</pre>
     */
    public LockRequest withFencingToken() {
        return new LockRequest(key, ttl, waitTime, watchdog, true, name, skipOn, minHold, backend, expiryReported);
    }

    /**
     * A copy with the given name for metrics, traces and the Actuator ({@code null}:
     * {@value #UNNAMED}).
     *
     * <pre>{@code
     * lockService.lock(LockRequest.of("invoice:" + id).withName("invoice-export"));
     * // acquisitions are counted under lock.name=invoice-export, never under each invoice's key
     * }</pre>
     * @throws IllegalArgumentException if {@code name} is blank
     */
    public LockRequest withName(@Nullable String name) {
        if (name != null && name.isBlank()) {
            throw new IllegalArgumentException("A lock request's name must not be blank; give a name that is the same "
                    + "for every call of this kind of lock, for example \"invoice-export\", or null for \"" + UNNAMED
                    + "\".");
        }
        return new LockRequest(key, ttl, waitTime, watchdog, fencingToken, name, skipOn, minHold, backend,
                expiryReported);
    }

    /**
     * A copy that tells metrics the caller skips its work, rather than fail, when it does
     * not get the lock for the given reasons; {@code @DistributedLock} sets it from
     * {@code onBusy} / {@code onUnavailable}. A caller of {@code tryLock} that skips its
     * work when the lock is taken says so the same way:
     *
     * <pre>{@code
     * lockService.tryLock(LockRequest.of("nightly-report").withWaitTime(Duration.ZERO).withSkipOn(SkipOn.BUSY))
     *         .ifPresent(lock -> ...);   // a busy lock counts as outcome=skipped, reason=busy, not as a timeout
     * }</pre>
     * @param skipOn when the caller skips ({@code null}: {@link SkipOn#NEVER})
     */
    public LockRequest withSkipOn(@Nullable SkipOn skipOn) {
        return new LockRequest(key, ttl, waitTime, watchdog, fencingToken, name, skipOn, minHold, backend,
                expiryReported);
    }

    /**
     * A copy that keeps the lock held for at least {@code minHold} from its acquisition,
     * even if it is released sooner: a release before then leaves the lock to expire when
     * the minimum hold ends (with a compare-and-shorten of its own lease, never touching
     * another owner's), and a release after it frees the lock as usual. ShedLock calls
     * this {@code lockAtLeastFor}: a job that finishes in milliseconds does not run again
     * on an instance whose clock is a little behind.
     *
     * <pre>{@code
     * lockService.tryLock(LockRequest.of("nightly-report")
     *         .withTtl(Duration.ofMinutes(10))
     *         .withMinHold(Duration.ofMinutes(1))   // no other instance runs it within a minute
     *         .withWaitTime(Duration.ZERO))
     *     .ifPresent(lock -> { try (lock) { report.run(); } });
     * }</pre>
     *
     * The minimum hold must not be longer than the ttl, and needs a backend that can
     * shorten a lease ({@code LockService.supportsMinHold()}: Redis, Redlock over Redis
     * nodes, the in-memory backend); otherwise acquiring fails with an
     * {@link IllegalArgumentException} or {@link UnsupportedOperationException}.
     * @param minHold the least time the lock stays held; {@code null} or zero for none
     * @throws IllegalArgumentException if {@code minHold} is negative
     */
    public LockRequest withMinHold(@Nullable Duration minHold) {
        if (minHold != null && minHold.isNegative()) {
            throw new IllegalArgumentException("The minimum hold of lock request '" + key + "' must not be negative, "
                    + "was " + minHold + "; give zero or null for none.");
        }
        return new LockRequest(key, ttl, waitTime, watchdog, fencingToken, name, skipOn, minHold, backend,
                expiryReported);
    }

    /**
     * A copy kept in the store named {@code backend} rather than the default one
     * ({@code distributed-lock.backend}): an application keeps fast Redis locks for most
     * work and moves the few where two holders would corrupt data to a consensus store.
     *
     * <pre>{@code
     * try (LockHandle lock = lockService.lock(LockRequest.of("ledger:" + id).withBackend("etcd").withFencingToken())) {
     *     ledger.post(entry, lock.fencingToken());
     * }
     * }</pre>
     *
     * The built-in names are {@code redis}, {@code redlock}, {@code etcd} and
     * {@code zookeeper}, each when configured; a name that is not fails the call with an
     * {@link UnknownLockBackendException} listing the configured ones.
     * @param backend the store's name; {@code null} for the default
     * @throws IllegalArgumentException if {@code backend} is blank
     */
    public LockRequest withBackend(@Nullable String backend) {
        if (backend != null && backend.isBlank()) {
            throw new IllegalArgumentException("The backend of lock request '" + key + "' must not be blank; name a "
                    + "configured backend such as \"redis\", or give null for distributed-lock.backend.");
        }
        return new LockRequest(key, ttl, waitTime, watchdog, fencingToken, name, skipOn, minHold, backend,
                expiryReported);
    }

    /**
     * A copy whose fixed lease (watchdog off), if it runs out while the lock is still
     * held, is reported as a lost lock: when it runs out, the handle turns lost and its
     * {@code onLost} listeners, the {@code LockLostEvent}, the lost-lease WARN and the
     * {@code distributed.lock.lost} metric ({@code reason=expired}) hear of it, as when
     * the watchdog finds a lease lost. A release that finds the lock gone is reported the
     * same way. Use it for work that always releases its lock when done, so that a lease
     * running out first means the work outlasted it: {@code @DistributedLock} and the
     * ShedLock provider do. Leave it off for a lock that is meant to expire rather than
     * be released ("at most once a minute"), the default of {@code lock} and
     * {@code tryLock}.
     *
     * <pre>{@code
     * try (LockHandle lock = lockService.lock(LockRequest.of("export:" + id)
     *         .withTtl(Duration.ofMinutes(5))
     *         .withWatchdog(false)          // at most five minutes, whatever happens
     *         .withExpiryReported(true))) { // and an alert if the export takes longer
     *     export.run();
     * }
     * }</pre> A lease that the watchdog renews is reported lost whatever this says.
     * @param expiryReported whether to report it; {@code null} for the caller's default
     */
    public LockRequest withExpiryReported(@Nullable Boolean expiryReported) {
        return new LockRequest(key, ttl, waitTime, watchdog, fencingToken, name, skipOn, minHold, backend,
                expiryReported);
    }

    /**
     * The name for metrics, traces and the Actuator: {@link #name()}, or
     * {@value #UNNAMED} if none was given.
     */
    public String nameOrDefault() {
        return name != null ? name : UNNAMED;
    }

    /**
     * When a caller that does not get its lock skips its work instead of failing: only
     * how metrics count the failed acquisition depends on it ({@code outcome=skipped}
     * with {@code reason=busy} or {@code unavailable}).
     */
    public enum SkipOn {

        /**
         * The caller fails (or handles the failure itself): a timeout counts as
         * {@code timeout}.
         */
        NEVER(false, false),
        /** The caller skips when another owner held the lock for the whole wait time. */
        BUSY(true, false),
        /**
         * The caller skips when the lock store could not be reached or answered with an
         * error.
         */
        UNAVAILABLE(false, true),
        /** The caller skips in both cases. */
        BUSY_OR_UNAVAILABLE(true, true);

        private final boolean busy;

        private final boolean unavailable;

        SkipOn(boolean busy, boolean unavailable) {
            this.busy = busy;
            this.unavailable = unavailable;
        }

        /** The value for the two cases. */
        public static SkipOn of(boolean busy, boolean unavailable) {
            return busy ? (unavailable ? BUSY_OR_UNAVAILABLE : BUSY) : (unavailable ? UNAVAILABLE : NEVER);
        }

        /**
         * Whether the caller skips when another owner held the lock for the whole wait
         * time.
         */
        public boolean whenBusy() {
            return busy;
        }

        /**
         * Whether the caller skips when the lock store could not be reached or failed.
         */
        public boolean whenUnavailable() {
            return unavailable;
        }

    }
}
