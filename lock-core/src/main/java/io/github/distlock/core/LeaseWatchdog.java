package io.github.distlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.github.distlock.core.LockBackend.LeaseRenewal;
import io.github.distlock.core.LockBackend.RenewalOutcome;

/**
 * Keeps held leases alive: one scheduler thread for every lock in the JVM, renewing each
 * lease after {@code ttl × renewalRatio} (a third by default) until it is released.
 *
 * <p>
 * Leases that fall due close together are renewed in one batch, so the backend can extend
 * many of them in one round trip. A renewal that finds the key gone or owned by someone
 * else, or that keeps failing until the lease would have run out, marks the handle lost
 * and logs a WARN. The backend bounds one renewal call, however many leases and Cluster
 * nodes it spans, by one operation timeout, so a hung node cannot starve the leases of
 * healthy ones.
 *
 * <p>
 * Lost-lease listeners (the handle's {@code onLost} listeners, then the
 * {@link LockListener}s: the WARN, the application event, metrics) run on a thread of
 * their own, in the order the losses were found: a slow {@code @EventListener} must not
 * delay the renewal of every other lease.
 */
public final class LeaseWatchdog implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(LeaseWatchdog.class);

    /**
     * Retry a failed renewal after this share of the renewal period, so several tries fit
     * in a lease.
     */
    private static final int RETRIES_PER_PERIOD = 4;

    private final LockBackend backend;

    private final double renewalRatio;

    private final ScheduledThreadPoolExecutor scheduler;

    /** Runs the lost-lease listeners; its one thread exists only while there is work. */
    private final ThreadPoolExecutor listenerExecutor;

    private final Set<DefaultLockHandle> leases = ConcurrentHashMap.newKeySet();

    /**
     * Fixed leases that are reported lost if they run out before their release
     * ({@link io.github.distlock.LockRequest#withExpiryReported}): never renewed, only
     * timed.
     */
    private final Set<DefaultLockHandle> fixedLeases = ConcurrentHashMap.newKeySet();

    private final Object scheduleMonitor = new Object();

    /**
     * Written under {@code scheduleMonitor}; volatile for the lock-free fast path of
     * {@code watch}.
     */
    private volatile @Nullable ScheduledFuture<?> nextTick;

    private volatile long nextTickNanos;

    /**
     * @param backend the store that renews the leases
     * @param renewalRatio the share of the ttl after which a lease is renewed, between 0
     * and 1
     */
    public LeaseWatchdog(LockBackend backend, double renewalRatio) {
        if (!(renewalRatio > 0 && renewalRatio < 1)) {
            throw new IllegalArgumentException("renewalRatio must be between 0 and 1, was " + renewalRatio);
        }
        this.backend = backend;
        this.renewalRatio = renewalRatio;
        this.scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "distributed-lock-watchdog");
            thread.setDaemon(true);
            return thread;
        });
        this.scheduler.setRemoveOnCancelPolicy(true);
        this.listenerExecutor = new ThreadPoolExecutor(0, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                runnable -> {
                    Thread thread = new Thread(runnable, "distributed-lock-lost-listeners");
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /** The number of leases being renewed now. */
    public int watchedLeases() {
        return leases.size();
    }

    /**
     * How far the most overdue renewal is behind its schedule now, or zero if none is
     * overdue. A healthy watchdog is never behind by much more than one renewal round,
     * which the backend bounds by its operation timeout; more means its thread is kept
     * from running (a blocking {@link LockListener#renewed} listener, CPU starvation, a
     * long GC pause), and leases may run out unrenewed.
     *
     * <pre>{@code
     * boolean lagging = watchdog.lag().compareTo(Duration.ofSeconds(2)) > 0;
     * }</pre>
     */
    public Duration lag() {
        long now = System.nanoTime();
        long worst = 0;
        for (DefaultLockHandle handle : leases) {
            worst = Math.max(worst, now - handle.nextRenewalNanos());
        }
        return Duration.ofNanos(worst);
    }

    void watch(DefaultLockHandle handle) {
        long due = handle.leaseDeadlineNanos() - handle.ttlMillis() * 1_000_000L + renewalPeriodNanos(handle);
        handle.nextRenewalNanos(due);
        leases.add(handle);
        tickNoLaterThan(due);
    }

    /**
     * Reports {@code handle}'s fixed lease lost when it runs out, unless it is released
     * first.
     */
    void watchExpiry(DefaultLockHandle handle) {
        fixedLeases.add(handle);
        tickNoLaterThan(handle.leaseDeadlineNanos());
    }

    void unwatch(DefaultLockHandle handle) {
        leases.remove(handle);
        fixedLeases.remove(handle);
    }

    /**
     * The handle's lease was just set to its (new) ttl by an extension sent at
     * {@code sentAtNanos}: the next renewal falls due a renewal period after that.
     */
    void extended(DefaultLockHandle handle, long sentAtNanos) {
        long due = sentAtNanos + renewalPeriodNanos(handle);
        handle.nextRenewalNanos(due);
        if (leases.contains(handle)) {
            tickNoLaterThan(due);
        }
        else if (fixedLeases.contains(handle)) {
            // A fixed lease can be extended to less than it had left.
            tickNoLaterThan(handle.leaseDeadlineNanos());
        }
    }

    /**
     * Something other than a renewal (an extension, the release of a fixed lease) found
     * the lease lost.
     */
    void lost(DefaultLockHandle handle, String why) {
        lose(handle, LockListener.LeaseLossReason.EXPIRED_OR_TAKEN, why);
    }

    /** A fixed lease ran out before its release. */
    void expired(DefaultLockHandle handle) {
        lose(handle, LockListener.LeaseLossReason.EXPIRED, "its fixed lease of " + handle.ttlMillis()
                + " ms (watchdog off) ran out before it was released: the guarded work outlasted it. Raise the ttl, "
                + "or let the watchdog renew the lease while the work runs");
    }

    private long renewalPeriodNanos(DefaultLockHandle handle) {
        return Math.max(1_000_000L, (long) (handle.ttlMillis() * 1_000_000L * renewalRatio));
    }

    private void tickNoLaterThan(long dueNanos) {
        // Fast path, taken by nearly every new lease (each falls due after those before
        // it): a
        // tick is already scheduled in time. Without it, every acquisition of every
        // thread would
        // queue on the monitor. It is safe against a tick that starts right now: that
        // tick clears
        // nextTick only after this lease was added to the set its final scan reads.
        if (nextTick != null && dueNanos - nextTickNanos >= 0) {
            return;
        }
        synchronized (scheduleMonitor) {
            if (scheduler.isShutdown() || (nextTick != null && dueNanos - nextTickNanos >= 0)) {
                return;
            }
            if (nextTick != null) {
                nextTick.cancel(false);
            }
            nextTickNanos = dueNanos;
            nextTick = scheduler.schedule(this::tick, dueNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        }
    }

    private void tick() {
        synchronized (scheduleMonitor) {
            nextTick = null;
        }
        try {
            expireFixedLeases();
            renewDueLeases();
        }
        catch (RuntimeException ex) {
            logger.error("Lease watchdog tick failed; retrying on the next tick", ex);
        }
        finally {
            boolean any = false;
            long earliest = 0;
            for (DefaultLockHandle handle : leases) {
                long due = handle.nextRenewalNanos();
                if (!any || due - earliest < 0) {
                    earliest = due;
                    any = true;
                }
            }
            for (DefaultLockHandle handle : fixedLeases) {
                long due = handle.leaseDeadlineNanos();
                if (!any || due - earliest < 0) {
                    earliest = due;
                    any = true;
                }
            }
            if (any) {
                tickNoLaterThan(earliest);
            }
        }
    }

    /**
     * Reports the fixed leases that ran out unreleased. Counted on this JVM's clock from
     * when the acquisition was sent, so a lease is reported no later than the store lets
     * it go. One being extended or released right now is left to that call.
     */
    private void expireFixedLeases() {
        long now = System.nanoTime();
        for (DefaultLockHandle handle : fixedLeases) {
            if (handle.isReleased()) {
                fixedLeases.remove(handle);
            }
            else if (now - handle.leaseDeadlineNanos() >= 0 && handle.renewalGuard().tryLock()) {
                try {
                    if (!handle.isReleased() && now - handle.leaseDeadlineNanos() >= 0) {
                        expired(handle);
                    }
                }
                finally {
                    handle.renewalGuard().unlock();
                }
            }
        }
    }

    private void renewDueLeases() {
        long now = System.nanoTime();
        List<DefaultLockHandle> due = new ArrayList<>();
        try {
            for (DefaultLockHandle handle : leases) {
                // Take leases that fall due within half a period too: one batch instead
                // of many ticks. A lease being extended or released right now is left to
                // that call (its guard is taken); a released one is never renewed again.
                if (handle.nextRenewalNanos() - renewalPeriodNanos(handle) / 2 - now <= 0
                        && handle.renewalGuard().tryLock()) {
                    if (handle.isReleased()) {
                        handle.renewalGuard().unlock();
                    }
                    else {
                        due.add(handle);
                    }
                }
            }
            if (!due.isEmpty()) {
                renew(due);
            }
        }
        finally {
            // Only now may a release go out: after every answer of this round was
            // applied.
            for (DefaultLockHandle handle : due) {
                handle.renewalGuard().unlock();
            }
        }
    }

    private void renew(List<DefaultLockHandle> due) {
        List<LeaseRenewal> renewals = new ArrayList<>(due.size());
        for (DefaultLockHandle handle : due) {
            renewals.add(new LeaseRenewal(handle.lockKey(), handle.token(), handle.ttlMillis()));
        }
        long sentAt = System.nanoTime();
        boolean[] reported = new boolean[due.size()];
        try {
            // Outcomes are applied as each node answers: a hung node must not keep the
            // leases on healthy ones from being counted as renewed until its own timeout.
            backend.renew(renewals, (index, outcome) -> {
                if (!reported[index]) {
                    reported[index] = true;
                    applyAlone(due.get(index), outcome, sentAt, renewals.get(index).ttlMillis());
                }
            });
        }
        catch (RuntimeException ex) {
            logger.debug("Lease renewal failed for " + due.size() + " lock(s)", ex);
        }
        for (int i = 0; i < due.size(); i++) {
            if (!reported[i]) {
                applyAlone(due.get(i), RenewalOutcome.FAILED, sentAt, renewals.get(i).ttlMillis());
            }
        }
    }

    /**
     * Applies one lease's outcome whatever happens to another's: a listener that throws
     * an {@link Error} (the listener seam only shields against exceptions) must not leave
     * the rest of the batch unapplied, their leases running out in this JVM while Redis
     * renewed them.
     */
    private void applyAlone(DefaultLockHandle handle, RenewalOutcome outcome, long sentAt, long ttlMillis) {
        try {
            apply(handle, outcome, sentAt, ttlMillis);
        }
        catch (RuntimeException | Error ex) {
            logger.error("Applying the renewal outcome " + outcome + " of lock " + handle.lockKey().printableName()
                    + " failed; the other leases of the batch are applied as usual", ex);
        }
    }

    private void apply(DefaultLockHandle handle, RenewalOutcome outcome, long sentAt, long ttlMillis) {
        if (handle.isReleased()) {
            return; // released while the renewal was in flight: nothing to report
        }
        switch (outcome) {
            case RENEWED -> {
                // The schedule first: the listeners the extension calls must not be able
                // to keep it unchanged.
                handle.nextRenewalNanos(sentAt + renewalPeriodNanos(handle));
                // The lease this renewal sent, whatever the handle's ttl is by now.
                handle.leaseExtended(sentAt, backend.renewedValidityMillis(ttlMillis));
            }
            case LOST -> lose(handle, LockListener.LeaseLossReason.EXPIRED_OR_TAKEN,
                    "the key is gone or now holds another owner's token");
            case FAILED -> {
                handle.renewalFailed();
                long now = System.nanoTime();
                if (now - handle.leaseDeadlineNanos() >= 0) {
                    // Also where renewals ran but too few replicas confirmed them
                    // (replica acks).
                    lose(handle, LockListener.LeaseLossReason.RENEWAL_FAILED, "the store could not be reached (or too "
                            + "few replicas confirmed the renewal) until the lease ran out");
                }
                else {
                    long retry = now + renewalPeriodNanos(handle) / RETRIES_PER_PERIOD;
                    handle.nextRenewalNanos(Math.min(retry, handle.leaseDeadlineNanos()));
                }
            }
        }
    }

    private void lose(DefaultLockHandle handle, LockListener.LeaseLossReason reason, String why) {
        leases.remove(handle);
        fixedLeases.remove(handle);
        handle.markLost(listenerExecutor, reason, why);
    }

    /** Stops renewing. Held leases then expire after their ttl. */
    @Override
    public void close() {
        synchronized (scheduleMonitor) {
            scheduler.shutdownNow();
        }
        listenerExecutor.shutdown();
        leases.clear();
        fixedLeases.clear();
    }

}
