package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.util.ClassUtils;
import org.springframework.util.function.SingletonSupplier;

import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.DistributedLock.LeaseLostAction;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockFailureHandler;
import io.github.distlock.LockFailureHandler.LockFailure;
import io.github.distlock.LockHandle;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;

/**
 * The logic behind {@code @DistributedLock}, independent of the AOP flavour (like Spring's
 * {@code CacheAspectSupport}): resolve the key, acquire through {@link LockService} before invoking, release in all
 * cases.
 *
 * <ul>
 * <li><b>Nested calls.</b> A call on a key that the current thread already holds through the annotation joins that
 * hold: no round trip, and only the call that acquired the lock releases it. Other threads are other owners.</li>
 * <li><b>Several keys</b> are resolved, de-duplicated and acquired in sorted order, all or none, within one wait
 * time.</li>
 * <li><b>Lost lease.</b> After the method returns, a lease the watchdog found lost, or one that ran out before the
 * release, becomes a {@link LockLostException} ({@code distributed-lock.throw-on-lease-lost}); if the method threw,
 * its exception propagates with the loss suppressed. {@code onLeaseLost = INTERRUPT} interrupts the method's thread
 * while it runs.</li>
 * <li><b>Failure.</b> If the lock is not acquired ({@link LockTimeoutException}, {@link LockBackendException}) the
 * method is not invoked; the call throws, returns an empty value ({@code onFailure = SKIP}), or asks a
 * {@link LockFailureHandler} bean. A null or blank key always throws {@link IllegalArgumentException}.</li>
 * <li><b>Results that come later.</b> For a {@link CompletionStage} the lock is held until the stage completes; for a
 * Reactor {@code Mono}/{@code Flux} it is acquired on subscription and held until termination or cancellation.</li>
 * </ul>
 *
 * <p>The method's own exception propagates unchanged. A failing release only logs a warning: the method's outcome
 * stands, and the lease expires by itself.
 */
public abstract class DistributedLockAspectSupport implements BeanFactoryAware {

    private static final Log logger = LogFactory.getLog(DistributedLockAspectSupport.class);

    /** Outcomes of letting go of a hold. */
    private static final int KEPT = 0;

    private static final int LOST = 1;

    private static final int EXPIRED = 2;

    private final LockOperationSource operationSource;

    private final LockKeyResolver keyResolver;

    private final Supplier<LockService> lockService;

    private boolean throwOnLeaseLost = true;

    private Duration defaultWaitTime = Duration.ofSeconds(3);

    private BeanFactory beanFactory;

    /**
     * @param operationSource finds the lock of each method
     * @param keyResolver resolves the key per call
     * @param lockService supplies the lock service on first use; looked up lazily so that the interceptor, an
     *        infrastructure bean created early, does not drag Redis and its configuration into early creation
     */
    protected DistributedLockAspectSupport(LockOperationSource operationSource, LockKeyResolver keyResolver,
            Supplier<LockService> lockService) {
        this.operationSource = operationSource;
        this.keyResolver = keyResolver;
        this.lockService = SingletonSupplier.of(lockService);
    }

    /**
     * Whether a call whose lease was lost before the method finished throws {@link LockLostException} (or completes
     * its stage or publisher with it); {@code distributed-lock.throw-on-lease-lost}, {@code true} by default.
     * Off, only the watchdog's {@link io.github.distlock.LockLostEvent} and log line tell.
     *
     * @param throwOnLeaseLost whether a lost lease fails the call
     */
    public void setThrowOnLeaseLost(boolean throwOnLeaseLost) {
        this.throwOnLeaseLost = throwOnLeaseLost;
    }

    /** Whether a lost lease makes the call fail; see {@link #setThrowOnLeaseLost(boolean)}. */
    public boolean isThrowOnLeaseLost() {
        return throwOnLeaseLost;
    }

    /**
     * The wait time of locks that name none ({@code distributed-lock.default-wait-time}); with several keys it
     * bounds the wait for all of them together.
     *
     * @param defaultWaitTime the configured default wait time
     */
    public void setDefaultWaitTime(Duration defaultWaitTime) {
        this.defaultWaitTime = defaultWaitTime;
    }

    /** Where {@link LockFailureHandler} beans named by {@code failureHandler} are looked up. */
    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /**
     * Runs one call of a possibly locked method.
     *
     * @param invoker proceeds with the call (the next interceptor or the method itself)
     * @param target the target object, not the proxy
     * @param method the invoked method
     * @param args the call's arguments
     * @return what the method returned; a stage or publisher that the lock follows; or the failure strategy's value
     * @throws Throwable what the method threw, unchanged; {@link LockLostException} after the method returned;
     *         or {@link LockTimeoutException}, {@link LockBackendException} or {@link IllegalArgumentException} (bad
     *         key) without the method having been invoked
     */
    protected Object execute(Invoker invoker, Object target, Method method, Object[] args) throws Throwable {
        Class<?> targetClass = (target != null ? AopProxyUtils.ultimateTargetClass(target) : null);
        LockOperation operation = operationSource.getLockOperation(method, targetClass);
        if (operation == null) {
            return invoker.invoke();
        }
        switch (operation.getResultKind()) {
            case VALUE:
                return operation.hasMultipleKeys() ? invokeInFrame(invoker, operation, args, target, false)
                        : invokeHolding(invoker, operation, args, target);
            case COMPLETION_STAGE:
                return invokeInFrame(invoker, operation, args, target, true);
            default:
                return ReactiveLocks.lockOnSubscribe(this, invoker.repeatable(), operation, args, target);
        }
    }

    /** The common case, one key and a plain result, kept free of the bookkeeping the other cases need. */
    private Object invokeHolding(Invoker invoker, LockOperation operation, Object[] args, Object target)
            throws Throwable {
        String key = keyResolver.resolveKey(operation, args, target);
        HeldLocks held = HeldLocks.current();
        LockHold hold = held.find(key);
        boolean interrupt = (operation.getLeaseLostAction() == LeaseLostAction.INTERRUPT);
        if (hold != null) {
            return invokeJoined(invoker, hold, interrupt);
        }
        LockHandle handle;
        try {
            handle = lockService.get().lock(operation.toRequest(key));
        } catch (LockTimeoutException | LockBackendException ex) {
            return lockUnavailable(operation, args, key, ex);
        }
        hold = new LockHold(key, handle);
        held.push(hold);
        if (interrupt) {
            hold.armInterrupt();
        }
        Object result;
        try {
            result = invoker.invoke();
        } catch (Throwable ex) {
            leave(held, hold, interrupt);
            suppress(ex, letGo(operation, hold));
            throw ex;
        }
        leave(held, hold, interrupt);
        LockLostException lost = letGo(operation, hold);
        if (lost != null) {
            throw lost;
        }
        return result;
    }

    /** A nested call on a key this thread holds: runs within the outer hold, which the outer call releases. */
    private static Object invokeJoined(Invoker invoker, LockHold hold, boolean interrupt) throws Throwable {
        if (!interrupt) {
            return invoker.invoke();
        }
        hold.armInterrupt();
        try {
            return invoker.invoke();
        } finally {
            hold.disarmInterrupt();
        }
    }

    private static void leave(HeldLocks held, LockHold hold, boolean interrupt) {
        if (interrupt) {
            hold.disarmInterrupt();
        }
        held.remove(hold);
    }

    /** The acquiring call is done: releases unless a joined asynchronous call still needs the lock. */
    private LockLostException letGo(LockOperation operation, LockHold hold) {
        int outcome = letGo(operation, hold, true);
        return (outcome == KEPT ? null
                : leaseLost(operation, hold.key(), "'" + hold.key() + "'", hold.handle(), outcome));
    }

    /**
     * Several keys with a plain result, or a {@link CompletionStage} result: acquires (or joins) every key of the
     * call, invokes, and lets go: at once for a plain result, a {@code null} stage or a thrown exception; when the
     * stage completes if {@code untilComplete} and a stage came back.
     */
    private Object invokeInFrame(Invoker invoker, LockOperation operation, Object[] args, Object target,
            boolean untilComplete) throws Throwable {
        LockFrame frame;
        try {
            frame = enter(operation, args, target, untilComplete);
        } catch (LockUnavailableException ex) {
            return lockUnavailable(operation, args, ex.getKey(), ex.getCause());
        }
        boolean interrupt = (operation.getLeaseLostAction() == LeaseLostAction.INTERRUPT);
        HeldLocks held = HeldLocks.current();
        frame.register(held, interrupt);
        Object result;
        try {
            result = invoker.invoke();
        } catch (Throwable ex) {
            frame.unregister(held, interrupt);
            suppress(ex, exit(frame));
            throw ex;
        }
        // For a stage, from here on the stage owns the lock, not this thread: later calls on this thread must not
        // join it.
        frame.unregister(held, interrupt);
        if (untilComplete && result != null) {
            return followStage(frame, (CompletionStage<?>) result);
        }
        LockLostException lost = exit(frame);
        if (lost != null) {
            throw lost;
        }
        return result;
    }

    /**
     * Releases when the stage completes, on whichever thread completes it. Returns a future that completes after
     * the release, with the stage's outcome, or with {@link LockLostException} if the lease was lost meanwhile.
     */
    private Object followStage(LockFrame frame, CompletionStage<?> stage) {
        LockOperation operation = frame.operation();
        if (operation.getLeaseLostAction() == LeaseLostAction.INTERRUPT && stage instanceof Future<?> future) {
            // The work runs elsewhere by now: cancelling it is the asynchronous form of the interrupt. Not on the
            // watchdog's thread, which the cancellation's callbacks (and the release) would keep from renewing.
            frame.onLost(lost -> ForkJoinPool.commonPool().execute(() -> future.cancel(true)));
        }
        if (!operation.isResultReplaceable()) {
            // A custom stage type that a CompletableFuture would not fit: follow it, but it keeps its own outcome.
            stage.whenComplete((value, failure) -> exitQuietly(frame));
            return stage;
        }
        CompletableFuture<Object> completion = new CompletableFuture<>();
        stage.whenComplete((value, failure) -> {
            LockLostException lost;
            try {
                lost = exit(frame);
            } catch (RuntimeException | Error ex) {
                completion.completeExceptionally(ex);
                return;
            }
            if (failure != null) {
                suppress(unwrap(failure), lost);
                completion.completeExceptionally(failure);
            } else if (lost != null) {
                completion.completeExceptionally(lost);
            } else {
                completion.complete(value);
            }
        });
        if (stage instanceof Future<?> future) {
            // A caller that cancels what it got back cancels the method's stage, so the work stops and the lock goes.
            completion.whenComplete((value, failure) -> {
                if (completion.isCancelled()) {
                    future.cancel(true);
                }
            });
        }
        return completion;
    }

    /**
     * Acquires (or joins) every key of one call, in sorted order, all or none, within the call's wait time.
     *
     * @param outlivesCall whether the call's work may go on after the method returned, so a joined outer hold must
     *        be retained until then
     * @throws LockUnavailableException naming the key that could not be had, after letting go of the others
     */
    LockFrame enter(LockOperation operation, Object[] args, Object target, boolean outlivesCall) {
        String[] keys = resolveKeys(operation, args, target);
        HeldLocks held = HeldLocks.current();
        LockHold[] holds = new LockHold[keys.length];
        boolean[] owned = new boolean[keys.length];
        Duration waitTime = (operation.getWaitTime() != null ? operation.getWaitTime() : defaultWaitTime);
        long deadline = System.nanoTime() + waitTime.toNanos();
        int taken = 0;
        try {
            for (; taken < keys.length; taken++) {
                String key = keys[taken];
                LockHold joined = held.find(key);
                if (joined != null) {
                    if (outlivesCall) {
                        joined.retain();
                    }
                    holds[taken] = joined;
                } else {
                    holds[taken] = new LockHold(key, acquire(operation, key, waitTime, deadline, taken == 0));
                    owned[taken] = true;
                }
            }
        } catch (LockTimeoutException | LockBackendException ex) {
            letGoTaken(operation, holds, owned, outlivesCall, taken);
            throw new LockUnavailableException(keys[taken], ex);
        } catch (RuntimeException | Error ex) {
            letGoTaken(operation, holds, owned, outlivesCall, taken);
            throw ex;
        }
        return new LockFrame(operation, holds, owned, outlivesCall);
    }

    private LockHandle acquire(LockOperation operation, String key, Duration waitTime, long deadline, boolean first) {
        if (first) {
            return lockService.get().lock(operation.toRequest(key));
        }
        // Later keys get what is left of the wait, so several keys together wait no longer than one would.
        Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
        return lockService.get()
                .tryLock(new LockRequest(key, operation.getTtl(), left, operation.getWatchdog()))
                .orElseThrow(() -> new LockTimeoutException(key, waitTime));
    }

    private void letGoTaken(LockOperation operation, LockHold[] holds, boolean[] owned, boolean outlivesCall,
            int taken) {
        for (int i = taken - 1; i >= 0; i--) {
            if ((owned[i] || outlivesCall) && holds[i].letGo()) {
                release(operation, holds[i]);
            }
        }
    }

    /**
     * The keys of one call: evaluated, then sorted and de-duplicated, so that calls locking the same keys in any
     * argument order take them in one global order and cannot deadlock.
     */
    private String[] resolveKeys(LockOperation operation, Object[] args, Object target) {
        if (!operation.hasMultipleKeys()) {
            return new String[] { keyResolver.resolveKey(operation, args, target) };
        }
        String[] keys = keyResolver.resolveKeys(operation, args, target);
        Arrays.sort(keys);
        int distinct = 0;
        for (String key : keys) {
            if (distinct == 0 || !key.equals(keys[distinct - 1])) {
                keys[distinct++] = key;
            }
        }
        return (distinct == keys.length ? keys : Arrays.copyOf(keys, distinct));
    }

    /**
     * The call is done with its locks (once, whoever asks first): lets go of each, releasing those no one else
     * needs, in reverse order.
     *
     * @return the lost lease to report, or {@code null}
     */
    LockLostException exit(LockFrame frame) {
        if (!frame.end()) {
            return null;
        }
        LockOperation operation = frame.operation();
        LockHold firstLost = null;
        int outcome = KEPT;
        StringBuilder lostKeys = null;
        for (int i = frame.size() - 1; i >= 0; i--) {
            if (!frame.uses(i)) {
                continue;
            }
            LockHold hold = frame.hold(i);
            int result = letGo(operation, hold, frame.owns(i));
            if (result != KEPT) {
                lostKeys = (lostKeys == null ? new StringBuilder() : lostKeys.insert(0, ", "));
                lostKeys.insert(0, "'" + hold.key() + "'");
                firstLost = hold;
                outcome = (outcome == LOST ? LOST : result);
            }
        }
        if (firstLost == null || !frame.reportLoss()) {
            return null;
        }
        return leaseLost(operation, firstLost.key(), lostKeys.toString(), firstLost.handle(), outcome);
    }

    /** {@link #exit}, for ends where nobody can receive the exception (cancellation): it is logged instead. */
    void exitQuietly(LockFrame frame) {
        LockLostException lost = exit(frame);
        if (lost != null) {
            logger.warn(lost.getMessage());
        }
    }

    /**
     * The exception that an {@code onLeaseLost = INTERRUPT} call whose work runs elsewhere ends with when its
     * lease is lost. Counts as the call's report of the loss.
     */
    LockLostException cancelledByLoss(LockFrame frame, LockHandle handle) {
        frame.reportLoss();
        return new LockLostException(handle.key(), "The lock '" + handle.key() + "' of "
                + frame.operation().describeMethod() + " was lost while its work ran (the key was deleted or taken "
                + "over, or Redis was unreachable until the lease ran out), so onLeaseLost = INTERRUPT cancelled the "
                + "work. Another instance may run the guarded work now" + fencingTokenClause(handle) + ".");
    }

    /** ", fencing token N" if the lost acquisition had one issued, else nothing: never asks Redis. */
    private static String fencingTokenClause(LockHandle handle) {
        OptionalLong fence = handle.issuedFencingToken();
        return fence.isPresent() ? "; fencing token " + fence.getAsLong() : "";
    }

    /**
     * One user of a hold is done; the last one releases it.
     *
     * @param report whether this call acquired the hold and so reports its loss
     * @return {@link #KEPT}, {@link #LOST} (found lost by the watchdog) or {@link #EXPIRED} (ran out before the
     *         release)
     */
    private static int letGo(LockOperation operation, LockHold hold, boolean report) {
        boolean ours = true;
        if (hold.letGo()) {
            ours = release(operation, hold);
        }
        if (!report) {
            return KEPT;
        }
        if (hold.handle().isLost()) {
            return LOST;
        }
        return (ours ? KEPT : EXPIRED);
    }

    /**
     * Never throws, so that neither the method's result nor its exception is masked by a failed release.
     *
     * @return {@code false} only if the lock was no longer ours; {@code true} if released, or if Redis could not be
     *         asked (the lease then expires by itself, and nothing says it was lost)
     */
    private static boolean release(LockOperation operation, LockHold hold) {
        try {
            return hold.handle().release();
        } catch (RuntimeException ex) {
            logger.warn("Could not release the lock '" + hold.key() + "' of " + operation.describeMethod()
                    + "; its lease expires by itself after the ttl: " + ex, ex);
            return true;
        }
    }

    private LockLostException leaseLost(LockOperation operation, String key, String keys, LockHandle handle,
            int outcome) {
        if (!throwOnLeaseLost) {
            // A lease the watchdog found lost was already logged and published as a LockLostEvent.
            if (outcome == EXPIRED) {
                logger.warn("The lock " + keys + " of " + operation.describeMethod() + " had already expired when "
                        + "the method returned, so another owner may have run concurrently. Raise the ttl, or keep "
                        + "the watchdog enabled so that the lease is renewed while the method runs.");
            }
            return null;
        }
        String why = (outcome == LOST
                ? "the lease watchdog found it lost (the key was deleted or taken over, or Redis was unreachable "
                        + "until the lease ran out)"
                : "its lease had expired when the method returned (raise the ttl, or keep the watchdog enabled so "
                        + "that the lease is renewed while the method runs)");
        return new LockLostException(key, "The lock " + keys + " of " + operation.describeMethod() + " was lost "
                + "before the method finished: " + why + ". Another instance may have run the guarded work at the "
                + "same time; check or compensate" + fencingTokenClause(handle)
                + ". Set distributed-lock.throw-on-lease-lost=false to only log it and publish a LockLostEvent.");
    }

    /** The failure strategy's value for a plain or stage result, checked against the return type. */
    private Object lockUnavailable(LockOperation operation, Object[] args, String key, LockAcquisitionException cause)
            throws Throwable {
        Object value = fallback(operation, args, key, cause);
        Class<?> returnType = operation.getMethod().getReturnType();
        if (operation.getFailureHandler() != null && returnType != void.class
                && !ClassUtils.isAssignableValue(returnType, value)) {
            throw new IllegalStateException("The failure handler '" + operation.getFailureHandler() + "' of "
                    + operation.describeMethod() + " returned " + (value == null ? "null" : "a "
                            + value.getClass().getName()) + ", which the method cannot return ("
                    + returnType.getName() + "). Return a value of that type, or throw.");
        }
        return value;
    }

    /**
     * What a call whose lock cannot be had returns instead: the failure handler's value, the empty value
     * ({@code SKIP}), or the acquisition failure itself thrown ({@code THROW}).
     */
    Object fallback(LockOperation operation, Object[] args, String key, LockAcquisitionException cause)
            throws Throwable {
        String handlerName = operation.getFailureHandler();
        if (handlerName != null) {
            return failureHandler(operation, handlerName)
                    .handle(new LockFailure(operation.getMethod(), args, key, cause));
        }
        if (operation.getFailureAction() == FailureAction.SKIP) {
            if (logger.isDebugEnabled()) {
                logger.debug("Skipped " + operation.describeMethod() + " (onFailure = SKIP): " + cause.getMessage());
            }
            return operation.emptyResult();
        }
        throw cause;
    }

    private LockFailureHandler failureHandler(LockOperation operation, String name) {
        if (beanFactory == null) {
            throw new IllegalStateException("Cannot look up the failure handler '" + name + "' of "
                    + operation.describeMethod() + ": the interceptor has no bean factory. Declare it as a bean.");
        }
        return beanFactory.getBean(name, LockFailureHandler.class);
    }

    /** Attaches a lost lease to the exception that ends the call anyway, unless it is that very exception. */
    static void suppress(Throwable failure, LockLostException lost) {
        if (lost != null && failure != lost) {
            failure.addSuppressed(lost);
        }
    }

    private static Throwable unwrap(Throwable failure) {
        return (failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure);
    }

    /** Proceeds with the intercepted call. */
    @FunctionalInterface
    protected interface Invoker {

        /**
         * Invokes the next step of the call.
         *
         * @return the method's result
         * @throws Throwable what the method threw
         */
        Object invoke() throws Throwable;

        /**
         * An invoker that may be invoked later, and more than once: a {@code Mono} or {@code Flux} method is
         * invoked on each subscription, once its lock is held. The default returns this invoker.
         *
         * @return an invoker for repeated, deferred invocation
         */
        default Invoker repeatable() {
            return this;
        }
    }
}
