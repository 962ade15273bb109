package io.github.distlock.core;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import org.awaitility.core.ConditionTimeoutException;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.testsupport.FaultRule;
import io.github.distlock.testsupport.RedisCommand;
import io.github.distlock.testsupport.RedisCommandMatcher;

/**
 * One operation under one fault, on a lock key of its own, and the invariants checked
 * against Redis itself:
 * <ul>
 * <li>no key is left held by a token that no live handle owns, and no wait-queue entry of
 * a caller that gave up, for longer than the operation timeout plus one renewal period
 * after the faults healed;</li>
 * <li>a handle that reports {@link LockHandle#isHeld()} has its token in Redis (sampled
 * throughout by {@link HeldHandleMonitor}), so no two handles of one key report it
 * held;</li>
 * <li>every fencing token returned is greater than every token returned before it for the
 * key;</li>
 * <li>every call returns within a bound: no thread is left blocked.</li>
 * </ul>
 * Breaches are collected as violations, with a timeline of the case (its calls, the
 * commands the proxy saw for the key, the fault's moves) to tell what happened.
 */
final class SweepCase {

    private static final Duration POLL = Duration.ofMillis(5);

    final SweepOperation operation;

    final SweepFault fault;

    final SweepTiming timing;

    final ProxiedLockServices services;

    /** The lock name, unique to this case. */
    final String name;

    final String redisKey;

    private final ExecutorService callers;

    private final ScheduledExecutorService faults;

    private final long startNanos = System.nanoTime();

    private final List<String> timeline = new CopyOnWriteArrayList<>();

    private final List<String> violations = new CopyOnWriteArrayList<>();

    private final List<String> outcomes = new CopyOnWriteArrayList<>();

    private final List<DefaultLockHandle> handles = new CopyOnWriteArrayList<>();

    private final List<String> flaggedTokens = new CopyOnWriteArrayList<>();

    private final List<Future<?>> faultTasks = new CopyOnWriteArrayList<>();

    private volatile FaultRule rule;

    private volatile long targetSentNanos;

    private long highestFencingToken;

    private String highestFencingTokenSource;

    SweepCase(SweepOperation operation, SweepFault fault, SweepTiming timing, String name, ProxiedLockServices services,
            ExecutorService callers, ScheduledExecutorService faults) {
        this.operation = operation;
        this.fault = fault;
        this.timing = timing;
        this.services = services;
        this.name = name;
        this.redisKey = ProxiedLockServices.redisKey(name);
        this.callers = callers;
        this.faults = faults;
    }

    /**
     * Runs the operation under the fault, heals, and checks the invariants; returns the
     * violations found.
     */
    List<String> run() {
        log("case " + operation.name() + " x " + fault.name() + " on " + redisKey + ", " + timing);
        watchCommands();
        operation.run(this);
        long settled = endFault();
        verify(settled);
        return violations;
    }

    // ------------------------------------------------------------------------------------------------
    // for operations

    LockService proxied() {
        return services.proxied.service;
    }

    LockService direct() {
        return services.direct.service;
    }

    /**
     * A call that prepares the operation, before its fault: retried until it succeeds,
     * since a reply the previous case delayed may still hold up the proxied connection
     * for a moment.
     */
    LockHandle setUp(String what, Callable<LockHandle> call) {
        AtomicReference<LockHandle> handle = new AtomicReference<>();
        try {
            await().atMost(Duration.ofSeconds(10)).pollInterval(POLL).until(() -> {
                handle.set(call(what, call));
                return handle.get() != null;
            });
        }
        catch (ConditionTimeoutException ex) {
            throw new IllegalStateException("The set-up call '" + what + "' of " + this + " failed:\n" + report(), ex);
        }
        return track(handle.get());
    }

    /** Runs the call on a thread of its own and waits for it, within the call bound. */
    <T> T call(String what, Callable<T> call) {
        return join(what, start(what, call));
    }

    <T> Future<T> start(String what, Callable<T> call) {
        log("call " + what);
        return callers.submit(call);
    }

    /**
     * The call's result, or null if it threw (an expected lock exception, logged) or did
     * not return within the bound (a violation: the thread is blocked).
     */
    <T> T join(String what, Future<T> future) {
        try {
            T result = future.get(timing.callBound().toMillis(), TimeUnit.MILLISECONDS);
            outcome(what, describe(result));
            return result;
        }
        catch (ExecutionException ex) {
            Throwable cause = ex.getCause();
            outcome(what, cause.getClass().getSimpleName());
            log(what + " threw " + cause);
            if (!(cause instanceof LockAcquisitionException || cause instanceof LockLostException)) {
                violation(what + " threw an unexpected " + cause);
            }
            return null;
        }
        catch (TimeoutException ex) {
            outcome(what, "blocked");
            violation(what + " did not return within " + timing.callBound().toMillis() + " ms: its thread is blocked");
            future.cancel(true);
            return null;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("The sweep was interrupted", ex);
        }
    }

    LockHandle track(Optional<LockHandle> handle) {
        return handle == null ? null : track(handle.orElse(null));
    }

    LockHandle track(LockHandle handle) {
        if (handle != null) {
            DefaultLockHandle tracked = (DefaultLockHandle) handle;
            handles.add(tracked);
            log("handle " + shortToken(tracked.token()) + " returned, held=" + tracked.isHeld());
            tracked.issuedFencingToken()
                .ifPresent(token -> recordFencingToken("handle " + shortToken(tracked.token()), token));
        }
        return handle;
    }

    synchronized void recordFencingToken(String source, long token) {
        log("fencing token " + token + " from " + source);
        if (token <= highestFencingToken) {
            violation("fencing token " + token + " from " + source + " is not above " + highestFencingToken + ", which "
                    + highestFencingTokenSource + " returned before it");
            return;
        }
        highestFencingToken = token;
        highestFencingTokenSource = source;
    }

    /**
     * The operation is about to send its target command: the fault's rules are armed (not
     * earlier, so the set-up's commands cannot use them up) and outages start now, or
     * after their offset.
     */
    void beforeTarget() {
        log("target command " + operation.target + " about to go out");
        fault.arm(this);
        fault.beforeTarget(this);
    }

    /**
     * Waits until the target command reached the proxy, or long enough that it never
     * will.
     */
    void awaitTargetSent() {
        awaitQuietly(timing.operationTimeout().multipliedBy(2).plus(timing.outageOffset()).plusMillis(200),
                () -> targetSentNanos != 0 || (rule != null && rule.triggerCount() > 0), "the target command sent");
    }

    /** Waits until a waiter is queued in Redis for the key. */
    void awaitQueued() {
        awaitQuietly(Duration.ofSeconds(3), () -> services.queueLength(redisKey) > 0, "a waiter queued");
    }

    /** Lets time pass: paces the scenario (it is not waiting for a condition). */
    void elapse(Duration duration) {
        elapseUntil(System.nanoTime() + duration.toNanos());
    }

    void elapseUntil(long nanos) {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // for faults

    /** The fault rule builder for the operation's target command on this case's key. */
    FaultRule.Builder onTarget() {
        return services.proxy.onNext(operation.target.on(redisKey)).times(timing.shots());
    }

    void useRule(FaultRule rule) {
        this.rule = rule;
        log("armed " + rule);
    }

    /** Runs {@code action} once the fault's rule has hit a command. */
    void whenTriggered(Runnable action) {
        AtomicBoolean done = new AtomicBoolean();
        faultTasks.add(faults.scheduleWithFixedDelay(() -> {
            if (rule.triggerCount() > 0 && done.compareAndSet(false, true)) {
                log("rule hit: " + rule);
                action.run();
                throw new CancellationMarker();
            }
        }, 0, 1, TimeUnit.MILLISECONDS));
    }

    /**
     * An outage that starts now (or after the timing's offset) and heals after the
     * timing's outage.
     */
    void outage(String what, Runnable begin) {
        Runnable start = () -> {
            log(what);
            begin.run();
            healAfter(timing.outage());
        };
        if (timing.outageOffset().isZero()) {
            start.run();
        }
        else {
            faultTasks.add(faults.schedule(start, timing.outageOffset().toNanos(), TimeUnit.NANOSECONDS));
        }
    }

    void healAfter(Duration delay) {
        faultTasks.add(faults.schedule(this::heal, delay.toNanos(), TimeUnit.NANOSECONDS));
    }

    private void heal() {
        services.heal();
        log("healed");
        watchCommands();
    }

    void log(String event) {
        timeline.add(String.format("%6d ms  %s", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos), event));
    }

    // ------------------------------------------------------------------------------------------------
    // invariants

    /**
     * Samples every tracked handle that reports the lock held: Redis must hold its token.
     * Sound with sampling: the handle reported held before and after the read, and a
     * lease never looks longer locally than in Redis.
     */
    void checkHeldHandles(Function<String, String> readLockValue) {
        for (DefaultLockHandle handle : handles) {
            if (handle.isReleased() || !handle.isHeld() || flaggedTokens.contains(handle.token())) {
                continue;
            }
            String value = readLockValue.apply(redisKey);
            if (handle.isHeld() && !handle.token().equals(value)) {
                flaggedTokens.add(handle.token());
                violation("handle " + shortToken(handle.token()) + " reports the lock held while Redis holds "
                        + (value == null ? "nothing" : shortToken(value)) + " (another owner can take it)");
            }
        }
    }

    /**
     * Lets a scheduled outage run its course, then ends every fault; returns when the
     * faults ended.
     */
    private long endFault() {
        long limit = System.nanoTime() + timing.outageOffset().plus(timing.outage()).plusSeconds(2).toNanos();
        // By index: a rule that hits meanwhile adds its heal to the list.
        for (int i = 0; i < faultTasks.size(); i++) {
            Future<?> task = faultTasks.get(i);
            if (!(task instanceof RunnableScheduledFuture<?> scheduled && scheduled.isPeriodic())) {
                try {
                    task.get(Math.max(0, limit - System.nanoTime()), TimeUnit.NANOSECONDS);
                }
                catch (ExecutionException | TimeoutException | CancellationException ex) {
                    // Healed below in any case.
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("The sweep was interrupted", ex);
                }
            }
        }
        faultTasks.forEach(task -> task.cancel(false));
        if (rule != null) {
            log("fault rule at the end: " + rule);
        }
        heal();
        return System.nanoTime();
    }

    private void verify(long settled) {
        Duration bound = timing.orphanBound();
        awaitClean(settled, bound, true, "after the faults healed");
        // A held handle without a fencing token draws one now: it must be above every
        // token returned so far.
        for (DefaultLockHandle handle : handles) {
            if (!handle.isReleased() && handle.isHeld() && handle.issuedFencingToken().isEmpty()) {
                Long token = call("fencingToken() of handle " + shortToken(handle.token()) + " after the faults",
                        handle::fencingToken);
                if (token != null) {
                    recordFencingToken("handle " + shortToken(handle.token()) + " after the faults", token);
                }
            }
        }
        for (DefaultLockHandle handle : handles) {
            if (!handle.isReleased()) {
                call("release of handle " + shortToken(handle.token()), handle::release);
            }
        }
        awaitClean(System.nanoTime(), bound, false, "after every handle was released");
        LockHandle probe = call("direct tryLock with a fencing token, after the case",
                () -> direct()
                    .tryLock(LockRequest.of(name).withTtl(timing.ttl()).withWaitTime(Duration.ZERO).withFencingToken())
                    .orElse(null));
        if (probe == null) {
            violation("the lock could not be taken after the case, with every handle released");
        }
        else {
            recordFencingToken("the acquisition after the case", probe.fencingToken());
            probe.release();
        }
    }

    /**
     * Waits until Redis holds no token but those of live handles (or none at all) and no
     * queue entry, within {@code bound} of {@code from}.
     */
    private void awaitClean(long from, Duration bound, boolean liveHandlesMayHold, String when) {
        long deadline = from + bound.toNanos();
        try {
            await().pollInterval(POLL)
                .atMost(Duration.ofNanos(Math.max(deadline - System.nanoTime(), POLL.toNanos())))
                .until(() -> isClean(liveHandlesMayHold));
        }
        catch (ConditionTimeoutException ex) {
            String value = services.lockValue(redisKey);
            violation("Redis still holds " + (value == null ? "no token" : "token " + shortToken(value)) + ", "
                    + services.queueLength(redisKey) + " queue entries and " + services.waiterEntries(redisKey)
                    + " waiter entries " + bound.toMillis() + " ms " + when
                    + (liveHandlesMayHold ? " (no live handle owns that token)" : ""));
        }
    }

    private boolean isClean(boolean liveHandlesMayHold) {
        String value = services.lockValue(redisKey);
        boolean owned = value == null || (liveHandlesMayHold
                && handles.stream().anyMatch(handle -> !handle.isReleased() && handle.token().equals(value)));
        return owned && services.queueLength(redisKey) == 0 && services.waiterEntries(redisKey) == 0;
    }

    // ------------------------------------------------------------------------------------------------
    // bookkeeping

    /**
     * Registers a rule that matches no command but sees each one: the timeline of the
     * key, and the target sent.
     */
    private void watchCommands() {
        services.proxy.onNext(RedisCommandMatcher.anyCommand().matching(this::sees)).delayReply(Duration.ofMillis(1));
    }

    private boolean sees(RedisCommand command) {
        if (command.argv().contains(redisKey)) {
            log("proxy <- " + describe(command));
            if (targetSentNanos == 0 && operation.target.is(command, redisKey)) {
                targetSentNanos = System.nanoTime();
            }
        }
        return false;
    }

    private String describe(RedisCommand command) {
        for (LockCommand kind : LockCommand.values()) {
            if (kind.is(command, redisKey)) {
                return kind + (kind == LockCommand.RENEW_SCRIPT ? "" : " " + shortToken(LockCommand.token(command)));
            }
        }
        return command.name();
    }

    private static String describe(Object result) {
        if (result instanceof Optional<?> optional) {
            return optional.map(SweepCase::describe).orElse("empty");
        }
        if (result instanceof DefaultLockHandle handle) {
            return "handle " + shortToken(handle.token());
        }
        return String.valueOf(result);
    }

    private void outcome(String what, String result) {
        outcomes.add(what + " -> " + result);
        log(what + " -> " + result);
    }

    private void violation(String description) {
        violations.add(description);
        log("VIOLATION " + description);
    }

    private static void awaitQuietly(Duration atMost, BooleanSupplier condition, String what) {
        try {
            await().pollInterval(Duration.ofMillis(2)).atMost(atMost).until(condition::getAsBoolean);
        }
        catch (ConditionTimeoutException ex) {
            // The operation goes on regardless; the timeline shows what was not seen.
        }
    }

    static String shortToken(String token) {
        return token.length() > 6 ? token.substring(0, 6) : token;
    }

    List<String> outcomes() {
        return outcomes;
    }

    List<String> violations() {
        return violations;
    }

    /** The case's violations and timeline, for a failure message. */
    String report() {
        return this + ": " + violations.size() + " violation(s)\n  " + String.join("\n  ", violations)
                + "\n timeline:\n  " + String.join("\n  ", timeline);
    }

    @Override
    public String toString() {
        return operation + " with " + fault;
    }

    /** Ends a periodic fault task once it did its work. */
    private static final class CancellationMarker extends RuntimeException {

        CancellationMarker() {
            super(null, null, false, false);
        }

    }

}
