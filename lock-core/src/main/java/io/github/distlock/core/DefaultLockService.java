package io.github.distlock.core;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockDurations;
import io.github.distlock.LockHandle;
import io.github.distlock.LockKeys;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.UnknownLockBackendException;
import io.github.distlock.core.LockBackend.AcquireResult;

/**
 * The one implementation of acquire, wait and release behind {@link LockService}, the
 * annotation and every backend. It uses what the backend can do: with a
 * {@link QueueingLockBackend} a waiter queues and is handed the lock; with any other it
 * polls. With a {@link FencingLockBackend} it issues fencing tokens; with any other,
 * asking for one fails before anything is sent.
 */
public class DefaultLockService implements LockService, AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(DefaultLockService.class);

    /** The backend name of a lock service built without one. */
    public static final String DEFAULT_BACKEND = "default";

    /**
     * The name locks choose this service's backend by ({@link LockRequest#backend()}).
     */
    private final String backendName;

    /**
     * Pauses between attempts while release messages are not being delivered
     * (subscription down): a short exponential backoff.
     */
    private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * With wake-ups on, a waiter still re-checks at the holder's lease end and at least
     * this often: a foreign client's DEL, an expiry or a lost message publishes nothing.
     */
    private static final long FALLBACK_POLL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * How long a waiter's place in the Redis queue lasts without a refresh. Each re-check
     * (at least every {@link #FALLBACK_POLL_NANOS}) refreshes it, so a live waiter keeps
     * its place, and a release skips the entry of a waiter that died within this long.
     */
    private static final long QUEUE_ENTRY_MILLIS = 3_000;

    private final LockBackend backend;

    /** The backend's wait queue, or {@code null} if it has none: waiters poll then. */
    private final @Nullable QueueingLockBackend queueing;

    /** The backend's fencing tokens, or {@code null} if it issues none. */
    private final @Nullable FencingLockBackend fencing;

    /**
     * The backend's lease adjustment (minimum hold, extend), or {@code null} if it has
     * none.
     */
    private final @Nullable LeaseAdjustingLockBackend adjusting;

    private final LeaseWatchdog watchdog;

    private final LockDefaults defaults;

    private final LockWaiters waiters;

    private final PendingReleases pendingReleases;

    /** Told of every acquisition, wait, renewal, loss and release. */
    private final LockListener listener;

    /**
     * Token sources, picked by thread id. One shared SecureRandom (NativePRNG on Linux)
     * serialises every acquisition on a global lock; a few independent generators don't,
     * and unlike a ThreadLocal they don't seed a new generator for every short-lived
     * virtual thread.
     */
    private final SecureRandom[] randoms = newRandoms();

    /**
     * @param backend where locks are stored
     * @param watchdog renews leases of locks that ask for it
     * @param defaults what a request that leaves a field {@code null} gets
     * @param waiters where waiting threads park until a release message wakes them
     */
    public DefaultLockService(LockBackend backend, LeaseWatchdog watchdog, LockDefaults defaults, LockWaiters waiters) {
        this(backend, watchdog, defaults, waiters, LockListeners.none());
    }

    /**
     * @param backend where locks are stored
     * @param watchdog renews leases of locks that ask for it
     * @param defaults what a request that leaves a field {@code null} gets
     * @param waiters where waiting threads park until a release message wakes them
     * @param listener told of everything that happens to a lock; {@link LockListeners#of}
     * combines several
     */
    public DefaultLockService(LockBackend backend, LeaseWatchdog watchdog, LockDefaults defaults, LockWaiters waiters,
            LockListener listener) {
        this(DEFAULT_BACKEND, backend, watchdog, defaults, waiters, listener);
    }

    /**
     * A lock service for one named backend, as {@link RoutingLockService} combines them:
     * it serves requests that name this backend or none, and refuses any other name.
     * @param backendName the backend's name, for requests, metrics and messages
     * @param backend where locks are stored
     * @param watchdog renews leases of locks that ask for it
     * @param defaults what a request that leaves a field {@code null} gets
     * @param waiters where waiting threads park until a release message wakes them
     * @param listener told of everything that happens to a lock
     */
    public DefaultLockService(String backendName, LockBackend backend, LeaseWatchdog watchdog, LockDefaults defaults,
            LockWaiters waiters, LockListener listener) {
        this.backendName = Objects.requireNonNull(backendName, "backendName");
        this.backend = Objects.requireNonNull(backend, "backend");
        this.queueing = backend instanceof QueueingLockBackend queue ? queue : null;
        this.fencing = backend instanceof FencingLockBackend fenced ? fenced : null;
        this.adjusting = backend instanceof LeaseAdjustingLockBackend adjust ? adjust : null;
        this.watchdog = Objects.requireNonNull(watchdog, "watchdog");
        this.defaults = Objects.requireNonNull(defaults, "defaults");
        this.waiters = Objects.requireNonNull(waiters, "waiters");
        this.pendingReleases = new PendingReleases(backend);
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    /** Stops retrying unconfirmed releases; their leases expire on their own. */
    @Override
    public void close() {
        pendingReleases.close();
    }

    @Override
    public Optional<LockHandle> tryLock(LockRequest request) {
        return acquire(request).handle();
    }

    /**
     * What one call got: the handle, or none; and if none because the lease had run out
     * before the reply could be used, how long the call had taken by then ({@code -1}
     * otherwise).
     */
    private record Outcome(Optional<LockHandle> handle, Duration ttl, Duration waitTime, long lapsedAfterMillis) {
    }

    private Outcome acquire(LockRequest request) {
        Objects.requireNonNull(request, "request");
        String name = LockKeys.requireValid(request.key(), defaults.maxKeyLength());
        if (request.backend() != null && !request.backend().equals(backendName)) {
            throw new UnknownLockBackendException(request.backend(), Set.of(backendName),
                    "Lock " + LockKeys.printable(name));
        }
        Duration ttl = request.ttl() != null ? request.ttl() : defaults.ttl();
        Duration waitTime = request.waitTime() != null ? request.waitTime() : defaults.waitTime();
        boolean renew = request.watchdog() != null ? request.watchdog() : defaults.watchdog();
        // A renewed lease is reported lost whenever a renewal finds it so; a fixed one
        // only if asked.
        boolean reportExpiry = !renew && Boolean.TRUE.equals(request.expiryReported());
        long ttlMillis = LockDurations.requireValidTtl(name, ttl);
        LockDurations.requireValidWaitTime(name, waitTime);
        if (request.fencingToken() && fencing == null) {
            throw new UnsupportedOperationException("Lock " + LockKeys.printable(name) + " was asked for a fencing "
                    + "token, but its backend (" + backend.getClass().getName() + ") issues none. Use a backend that "
                    + "implements FencingLockBackend (the Redis backends do), or do not ask for a fencing token.");
        }
        long minHoldMillis = minHoldMillis(name, request.minHold(), ttl, ttlMillis);
        LockKey key = backend.lockKey(name);
        long startedNanos = System.nanoTime();
        LockContext context = new LockContext(key, request.nameOrDefault(), backendName, ttlMillis, renew,
                startedNanos);
        listener.acquiring(context);
        if (Thread.currentThread().isInterrupted()) {
            // Like Lock.lockInterruptibly: an interrupted caller does not start; nothing
            // was sent.
            LockAcquisitionException ex = interrupted(key, "before acquiring");
            listener.notAcquired(context, LockListener.AcquireOutcome.INTERRUPTED, ex);
            throw ex;
        }
        Acquisition acquisition = new Acquisition(key, newToken(), ttlMillis, minHoldMillis, renew, reportExpiry,
                startedNanos + waitTime.toNanos(), context);
        Optional<LockHandle> result;
        try {
            result = acquisition.run(request.fencingToken(), waitTime.isZero());
        }
        catch (RuntimeException | Error ex) {
            // The outcome is unknown (the backend failed) or unwanted (interrupted):
            // nothing of ours
            // may stay in Redis. After a backend failure, undo in the background rather
            // than
            // holding the caller up for a Redis that just failed it.
            if (acquisition.sent) {
                // A store that answered (too few replica acks, say) holds our write:
                // release it now.
                boolean backendFailed = ex instanceof LockBackendException failure && !failure.isOutcomeKnown();
                pendingReleases.undo(key, acquisition.token, acquisition.queued, ttlMillis, !backendFailed);
            }
            listener.notAcquired(context, failedOutcome(ex, request.skipOn()), ex);
            throw ex;
        }
        if (result.isPresent()) {
            listener.acquired(context);
        }
        else {
            listener.notAcquired(context, request.skipOn().whenBusy() ? LockListener.AcquireOutcome.SKIPPED_BUSY
                    : LockListener.AcquireOutcome.TIMEOUT, null);
        }
        return new Outcome(result, ttl, waitTime, acquisition.lapsedAfterMillis);
    }

    /**
     * The request's minimum hold in ms (0 for none), checked before anything is sent: the
     * backend must be able to shorten a lease, and the lock must not expire before the
     * minimum hold ends.
     */
    private long minHoldMillis(String name, @Nullable Duration minHold, Duration ttl, long ttlMillis) {
        if (minHold == null || minHold.isZero()) {
            return 0;
        }
        if (minHold.isNegative()) {
            throw new IllegalArgumentException("Lock " + LockKeys.printable(name)
                    + " asks for a negative minimum hold (" + minHold + "); give zero or null for none.");
        }
        if (!supportsMinHold()) {
            throw new UnsupportedOperationException("Lock " + LockKeys.printable(name) + " asks for a minimum hold of "
                    + minHold + ", but its backend (" + backend.getClass().getName() + ") cannot shorten a lease on "
                    + "its own token, so a release before then could only delete the lock. Use a backend that "
                    + "implements LeaseAdjustingLockBackend (Redis, Redlock over Redis nodes, InMemoryLockBackend), "
                    + "or drop the minimum hold.");
        }
        // Rounded up: a minimum is never cut short by the conversion.
        long millis = minHold.toMillis() + (minHold.toNanosPart() % 1_000_000 != 0 ? 1 : 0);
        if (millis > ttlMillis) {
            throw new IllegalArgumentException("Lock " + LockKeys.printable(name) + " asks for a minimum hold of "
                    + minHold + ", longer than its ttl of " + ttl + ": the lease would run out first. Give a ttl "
                    + "at least as long as the minimum hold, or a shorter minimum hold.");
        }
        return millis;
    }

    /**
     * Whether the backend can shorten and set a held lease on its own token
     * ({@link LeaseAdjustingLockBackend}): a Redlock over nodes that cannot says no.
     */
    @Override
    public boolean supportsMinHold() {
        return adjusting != null && adjusting.supportsLeaseAdjustment();
    }

    /**
     * How an acquisition that threw ended. Only a store failure can be a skip: the
     * annotation skips over a {@link LockBackendException}, and lets anything else (an
     * interrupt, a bug) propagate.
     */
    private static LockListener.AcquireOutcome failedOutcome(Throwable ex, LockRequest.SkipOn skipOn) {
        if (ex instanceof LockAcquisitionException && ex.getCause() instanceof InterruptedException) {
            return LockListener.AcquireOutcome.INTERRUPTED;
        }
        return (skipOn.whenUnavailable() && ex instanceof LockBackendException
                ? LockListener.AcquireOutcome.SKIPPED_UNAVAILABLE : LockListener.AcquireOutcome.BACKEND_ERROR);
    }

    /**
     * One call of {@link #tryLock}: its attempts, its place in the queue and its wait.
     */
    private final class Acquisition {

        private final LockKey key;

        /**
         * The token of the latest attempt. Waiting on a backend without a wait queue
         * draws a new one for every attempt (see {@link #pollAttempts}); the handle gets
         * the token of the attempt that won.
         */
        private String token;

        private final long ttlMillis;

        private final long minHoldMillis;

        private final boolean renew;

        /** Whether a fixed lease that runs out before its release is reported lost. */
        private final boolean reportExpiry;

        private final long deadline;

        private final LockContext context;

        /**
         * Whether any command went out: from then on a failure leaves something to undo.
         */
        boolean sent;

        /** Whether an attempt may have queued us. */
        boolean queued;

        /**
         * How long the call had taken when a granted lease was found run out; -1 if none
         * was.
         */
        long lapsedAfterMillis = -1;

        Acquisition(LockKey key, String token, long ttlMillis, long minHoldMillis, boolean renew, boolean reportExpiry,
                long deadline, LockContext context) {
            this.key = key;
            this.token = token;
            this.ttlMillis = ttlMillis;
            this.minHoldMillis = minHoldMillis;
            this.renew = renew;
            this.reportExpiry = reportExpiry;
            this.deadline = deadline;
            this.context = context;
        }

        /**
         * The first attempt found the lock held and the caller goes on waiting: tell the
         * listeners, once.
         */
        private void waitingStarted() {
            if (!context.waited()) {
                context.markWaiting();
                listener.waiting(context);
            }
        }

        Optional<LockHandle> run(boolean fencingToken, boolean once) {
            if (queueing == null) {
                return poll(fencingToken);
            }
            if (!fencingToken && (once || queueing.triesBeforeQueueing())) {
                // Most locks are free when asked for, and most holders never read the
                // fencing token: try the bare SET NX PX first, the cheapest acquisition
                // there is, and issue the token on demand. Only a caller that finds the
                // lock taken goes on to queue. Not where the store's plain attempt costs
                // as much as queueing (ZooKeeper): there a caller that will wait queues
                // at once.
                long sentAt = System.nanoTime();
                sent = true;
                AcquireResult attempt = backend.tryAcquire(key, token, ttlMillis);
                if (attempt.acquired()) {
                    return held(attempt.fencingToken(), attempt.validityMillis(), sentAt, false);
                }
                if (deadline - System.nanoTime() <= 0) {
                    return Optional.empty();
                }
                waitingStarted();
            }
            // Registered before the next attempt: that attempt queues us in the
            // store, and a release may hand the lock over before it even returns.
            LockWaiters.Waiter waiter = once ? null : waiters.enter(token);
            try {
                return attemptAndWait(waiter);
            }
            finally {
                if (waiter != null) {
                    waiters.leave(waiter);
                }
            }
        }

        /**
         * This call's place among the threads of this JVM polling for the key, once it
         * waits.
         */
        private LockWaiters.@Nullable Poller poller;

        /**
         * Waiting on a backend without a wait queue: attempts with a randomized pause,
         * never sleeping past the holder's lease. Where the backend announces releases
         * (Redlock's release hints, delivered to {@link LockWaiters}), the longest waiter
         * of this JVM is woken and tries again at once; the pause stays as the fallback
         * for a lost announcement or a release that nobody announced (an expiry, another
         * client's DEL).
         */
        private Optional<LockHandle> poll(boolean fencingToken) {
            try {
                return pollAttempts(fencingToken);
            }
            finally {
                if (poller != null) {
                    waiters.leavePolling(key, poller);
                }
            }
        }

        private Optional<LockHandle> pollAttempts(boolean fencingToken) {
            long backoff = MIN_BACKOFF_NANOS;
            // A waiter of this JVM was woken for a release and has not tried yet: queue
            // behind it
            // rather than try first, or a releaser that locks again at once would win
            // every time.
            if (deadline - System.nanoTime() > 0 && waiters.wakePending(key)) {
                poller = waiters.enterPolling(key);
                long delay = defaults.retryDelay() != null ? defaults.retryDelay().toNanos() : MAX_BACKOFF_NANOS;
                poller.await(Math.min(deadline - System.nanoTime(),
                        ThreadLocalRandom.current().nextLong(delay / 2, delay + 1)));
            }
            boolean first = true;
            while (true) {
                if (poller != null) {
                    poller.attempting();
                }
                if (!first) {
                    // A token per attempt: a grant an earlier attempt left behind (its
                    // answer came too late
                    // to count, its give-back never arrived) then reads as taken, never
                    // as a fresh vote of
                    // this one (Redlock), and that attempt's give-back cannot delete what
                    // this one counts.
                    token = newToken();
                }
                first = false;
                long sentAt = System.nanoTime();
                sent = true;
                AcquireResult attempt;
                LockBackendException missed = null;
                try {
                    attempt = backend.tryAcquire(key, token, ttlMillis);
                }
                catch (LockBackendException ex) {
                    // A round that decided nothing only because answers came too late
                    // (Redlock on a loaded
                    // machine) does not end a wait: the next round, on a token of its
                    // own, may well pass.
                    if (!backend.isTransient(ex)) {
                        throw ex;
                    }
                    missed = ex;
                    attempt = AcquireResult.notAcquired(0, 0);
                }
                if (attempt.acquired()) {
                    if (poller != null) {
                        poller.acquired = true;
                    }
                    long fence = attempt.fencingToken();
                    if (fencingToken && fence == 0) {
                        fence = fencing.issueFencingToken(key, token, ttlMillis);
                        if (fence == 0) {
                            // Lost between the two calls (its lease ran out, or most of a
                            // quorum's
                            // did): no lock, no token, and whatever of it is left is
                            // given back.
                            pendingReleases.undo(key, token, false, ttlMillis, true);
                            return Optional.empty();
                        }
                    }
                    return held(fence, attempt.validityMillis(), sentAt, false);
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    if (missed != null) {
                        throw missed; // undecided, not taken: the caller's undo takes
                                      // this token back
                    }
                    return Optional.empty();
                }
                if (missed != null) {
                    // Its outcome is unknown: nothing of it may stay, whatever is still
                    // on its way.
                    pendingReleases.undo(key, token, false, ttlMillis, false);
                }
                waitingStarted();
                if (poller == null) {
                    poller = waiters.enterPolling(key);
                }
                // Starts the release announcements on the first wait; they are only ever
                // a shortcut.
                waiters.startNotifications(key);
                long pause;
                if (defaults.retryDelay() != null) {
                    // Random, so that callers that split a vote (Redlock) do not collide
                    // again.
                    long delay = defaults.retryDelay().toNanos();
                    pause = Math.min(remaining, ThreadLocalRandom.current().nextLong(delay / 2, delay + 1));
                }
                else {
                    pause = Math.min(remaining, ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1));
                    backoff = Math.min(MAX_BACKOFF_NANOS, backoff * 2);
                }
                if (attempt.holderTtlMillis() > 0) {
                    pause = Math.min(pause, TimeUnit.MILLISECONDS.toNanos(attempt.holderTtlMillis()));
                }
                poller.await(pause);
                if (Thread.currentThread().isInterrupted()) {
                    throw interrupted(key, "while waiting");
                }
            }
        }

        private Optional<LockHandle> attemptAndWait(LockWaiters.@Nullable Waiter waiter) {
            long backoff = MIN_BACKOFF_NANOS;
            while (true) {
                // Wake-ups can be trusted only if the subscription was up before this
                // attempt: a
                // hand-over published before it started is lost and must be found by
                // polling.
                // (Asked without starting it: only a failed attempt starts the
                // subscription.)
                boolean notifiedBefore = waiter != null && waiters.notificationsDelivered(key);
                long sentAt = System.nanoTime();
                long waitLeft = deadline - sentAt;
                long queueMillis = waitLeft > 0
                        ? Math.min(TimeUnit.NANOSECONDS.toMillis(waitLeft) + 1, QUEUE_ENTRY_MILLIS) : 0;
                boolean queuedBefore = queued;
                sent = true;
                queued |= queueMillis > 0;
                AcquireResult attempt = queueing.tryAcquire(key, token, ttlMillis, queueMillis, queuedBefore,
                        fencing != null);
                if (attempt.acquired()) {
                    // Already queued: the previous holder's release gave it to us, the
                    // queue's head.
                    return held(attempt.fencingToken(), attempt.validityMillis(), sentAt, queuedBefore);
                }
                if (waiter != null) {
                    waiter.seen(attempt.fencingCounter());
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0 || waiter == null) {
                    return stopWaiting();
                }
                waitingStarted();
                // Asked after every failed attempt, as this is what starts the
                // subscription on the
                // first wait; it must not sit behind notifiedBefore, which is false until
                // then.
                boolean notifying = waiters.startNotifications(key);
                long pause;
                if (notifiedBefore && notifying) {
                    pause = Math.min(remaining, FALLBACK_POLL_NANOS);
                }
                else {
                    pause = Math.min(remaining, ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1));
                    backoff = Math.min(MAX_BACKOFF_NANOS, backoff * 2);
                }
                // Never sleep past the holder's lease: it may expire without anyone
                // handing over.
                if (attempt.holderTtlMillis() > 0) {
                    pause = Math.min(pause, TimeUnit.MILLISECONDS.toNanos(attempt.holderTtlMillis()));
                }
                // A handed-over lease is counted from this attempt (the hand-over came
                // later), so
                // re-check often enough that the count errs by at most a quarter of the
                // lease.
                pause = Math.min(pause, TimeUnit.MILLISECONDS.toNanos(ttlMillis) / 4);
                long handedOver = waiter.await(pause);
                // Proven, and drawn after this attempt ran (LockWaiters): the lease
                // started after
                // sentAt, so counting from sentAt never outlasts Redis's count. Confirmed
                // first (replica
                // acks): the hand-over was written on the releaser's connection, not
                // ours.
                if (handedOver > 0 && queueing.confirmHandOver(key, token, ttlMillis, handedOver).acquired()) {
                    return held(handedOver, ttlMillis, sentAt, true);
                }
                if (Thread.currentThread().isInterrupted()) {
                    throw interrupted(key, "while waiting");
                }
            }
        }

        /**
         * The wait is over: leaves the queue. A release may have handed us the lock in
         * the last moment, in which case we own it and return it, as if that last attempt
         * had succeeded.
         */
        private Optional<LockHandle> stopWaiting() {
            if (!queued) {
                return Optional.empty();
            }
            long sentAt = System.nanoTime();
            AcquireResult last = queueing.stopWaiting(key, token, ttlMillis);
            queued = false;
            // A hand-over, like one announced by message: confirmed before it counts
            // (replica acks).
            return last.acquired() && queueing.confirmHandOver(key, token, ttlMillis, last.fencingToken()).acquired()
                    ? held(last.fencingToken(), last.validityMillis(), sentAt, true) : Optional.empty();
        }

        /**
         * The lock holds our token, surely ours for {@code validityMillis} counted from
         * {@code sentAt}. Returns the handle, unless the caller was interrupted meanwhile
         * (then this throws, and the caller undoes the acquisition) or the lease has
         * already run out (a stall between the reply and now): a handle must never report
         * a lock that Redis may already have given to someone else. Then the acquisition
         * is undone and this call ends without the lock, even with wait time left: the
         * undo may still be retrying in the background, and would release whatever a
         * further attempt with the same token took.
         */
        private Optional<LockHandle> held(long fencingToken, long validityMillis, long sentAt, boolean handedOver) {
            if (Thread.currentThread().isInterrupted()) {
                throw interrupted(key, "while acquiring");
            }
            long leaseDeadline = sentAt + TimeUnit.MILLISECONDS.toNanos(validityMillis);
            if (System.nanoTime() - leaseDeadline >= 0) {
                lapsedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - context.startedNanos());
                pendingReleases.undo(key, token, queued, ttlMillis, true);
                queued = false;
                return Optional.empty();
            }
            DefaultLockHandle handle = new DefaultLockHandle(key, token, fencingToken, ttlMillis, leaseDeadline,
                    backend, (renew || reportExpiry) ? watchdog : null, reportExpiry, pendingReleases, context,
                    listener);
            if (minHoldMillis > 0) {
                // Counted from now, after the reply: the lock was set before, so it is
                // held at least this long.
                handle.holdAtLeastUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(minHoldMillis));
            }
            context.markAcquired(handle, handedOver, System.nanoTime());
            if (renew) {
                watchdog.watch(handle);
            }
            else if (reportExpiry) {
                watchdog.watchExpiry(handle);
            }
            return Optional.of(handle);
        }

    }

    /**
     * The interrupt flag stays set: the caller's code decides what the interrupt means,
     * and the undo does not need it cleared (backend calls ignore it).
     */
    private static LockAcquisitionException interrupted(LockKey key, String when) {
        return new LockAcquisitionException(key.name(),
                "Interrupted " + when + " lock " + key.printableName()
                        + "; it is not held, and nothing of this attempt is left in Redis.",
                new InterruptedException());
    }

    @Override
    public LockHandle lock(LockRequest request) {
        Outcome outcome = acquire(request);
        return outcome.handle()
            .orElseThrow(
                    () -> outcome.lapsedAfterMillis() >= 0
                            ? new LockTimeoutException(request.key(), outcome.waitTime(), outcome.ttl(),
                                    outcome.lapsedAfterMillis())
                            : new LockTimeoutException(request.key(), outcome.waitTime()));
    }

    /**
     * {@code distributed-lock.max-key-length}: every method here refuses a longer key.
     */
    /** The name locks choose this service's backend by. */
    public String backendName() {
        return backendName;
    }

    @Override
    public int maxKeyLength() {
        return defaults.maxKeyLength();
    }

    /**
     * {@code distributed-lock.default-wait-time}, which {@link #lockAll(java.util.List)}
     * shares among its keys.
     */
    @Override
    public Duration defaultWaitTime() {
        return defaults.waitTime();
    }

    @Override
    public <T extends @Nullable Object> T callLocked(LockRequest request, Callable<T> action) throws Exception {
        Objects.requireNonNull(action, "action");
        LockHandle handle = lock(request);
        try {
            return action.call();
        }
        finally {
            releaseQuietly(handle);
        }
    }

    /**
     * Releases after guarded work has finished. A failed release must not turn finished
     * work into an error: the work ran under the lock, and the lease expires on its own.
     */
    private static void releaseQuietly(LockHandle handle) {
        try {
            if (!handle.release()) {
                logger.warn("Lock " + LockKeys.printable(handle.key()) + " had already expired when the work finished; "
                        + "another owner may have run concurrently. Raise the ttl or keep the watchdog on.");
            }
        }
        catch (LockBackendException ex) {
            logger.warn("Could not release lock " + LockKeys.printable(handle.key())
                    + " now; retrying in the background until Redis answers or the lease runs out", ex);
        }
    }

    private static SecureRandom[] newRandoms() {
        int stripes = Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors() * 2 - 1)) * 2;
        SecureRandom[] randoms = new SecureRandom[stripes];
        for (int i = 0; i < stripes; i++) {
            randoms[i] = newRandom();
        }
        return randoms;
    }

    private static SecureRandom newRandom() {
        try {
            return SecureRandom.getInstance("DRBG");
        }
        catch (NoSuchAlgorithmException ex) {
            return new SecureRandom();
        }
    }

    private String newToken() {
        byte[] bytes = new byte[16];
        randoms[(int) Thread.currentThread().getId() & (randoms.length - 1)].nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /**
     * What a request gets for the fields it leaves {@code null}.
     *
     * @param ttl the default lease
     * @param waitTime the default wait
     * @param watchdog whether leases are renewed by default
     * @param retryDelay on a backend without a wait queue, the longest pause between a
     * waiter's attempts, each pause random between half of it and all of it; {@code null}
     * for a short exponential backoff (2 ms doubling to 100 ms)
     * @param maxKeyLength the longest key accepted, in characters, at least 1
     */
    public record LockDefaults(Duration ttl, Duration waitTime, boolean watchdog, @Nullable Duration retryDelay,
            int maxKeyLength) {

        /**
         * @throws IllegalArgumentException if {@code maxKeyLength} is less than 1
         */
        public LockDefaults {
            if (maxKeyLength < 1) {
                throw new IllegalArgumentException("The maximum key length must be at least 1, was " + maxKeyLength
                        + "; the default is " + LockKeys.DEFAULT_MAX_LENGTH + ".");
            }
        }

        /**
         * Defaults with keys of up to {@value LockKeys#DEFAULT_MAX_LENGTH} characters.
         */
        public LockDefaults(Duration ttl, Duration waitTime, boolean watchdog, @Nullable Duration retryDelay) {
            this(ttl, waitTime, watchdog, retryDelay, LockKeys.DEFAULT_MAX_LENGTH);
        }

        /** Defaults with the exponential backoff between a polling waiter's attempts. */
        public LockDefaults(Duration ttl, Duration waitTime, boolean watchdog) {
            this(ttl, waitTime, watchdog, null);
        }
    }

}
