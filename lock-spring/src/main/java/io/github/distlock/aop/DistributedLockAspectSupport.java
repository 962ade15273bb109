package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.util.ClassUtils;
import org.springframework.util.ConcurrentReferenceHashMap;
import org.springframework.util.function.SingletonSupplier;

import io.github.distlock.DistributedLock.LeaseLostAction;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockFailureHandler;
import io.github.distlock.LockHandle;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.RoutingLockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.MultiLockHandle;

/**
 * The logic behind {@code @DistributedLock}, independent of the AOP flavour (like
 * Spring's {@code CacheAspectSupport}): resolve the key, acquire through
 * {@link LockService} before invoking, release in all cases.
 *
 * <ul>
 * <li><b>Nested calls.</b> A call on a key that the current thread already holds through
 * the annotation joins that hold: no round trip, and only the call that acquired the lock
 * releases it. Other threads are other owners.</li>
 * <li><b>Several keys</b> are resolved; those the thread does not hold yet are acquired
 * with {@link LockService#lockAll(List)}: sorted, de-duplicated, all or none, within one
 * wait time.</li>
 * <li><b>Lost lease.</b> After the method returns, a lease the watchdog found lost, or
 * one that ran out before the release, becomes a {@link LockLostException}
 * ({@code distributed-lock.throw-on-lease-lost}); if the method threw, its exception
 * propagates with the loss suppressed. {@code onLeaseLost = INTERRUPT} interrupts the
 * method's thread while it runs.</li>
 * <li><b>Failure.</b> If the lock is not acquired ({@link LockTimeoutException},
 * {@link LockBackendException}) the method is not invoked; the call throws, returns an
 * empty value ({@code onBusy} / {@code onUnavailable} / {@code onFailure = SKIP}; a skip
 * because the store was unavailable logs a WARN, at most one a minute per lock name), or
 * asks a {@link LockFailureHandler} bean. A null or blank key always throws
 * {@link IllegalArgumentException}.</li>
 * <li><b>Results that come later.</b> For a {@link CompletionStage} the lock is held
 * until the stage completes; for a reactive type that Spring's
 * {@link org.springframework.core.ReactiveAdapterRegistry} knows (Reactor's
 * {@code Mono}/{@code Flux}, RxJava, Mutiny, ...) it is acquired on subscription and held
 * until termination or cancellation.</li>
 * </ul>
 *
 * <p>
 * Like {@code CacheAspectSupport}, what can be decided per method is decided once and
 * cached: the parsed {@link LockOperation} (by the {@link LockOperationSource}) and the
 * {@link FailureStrategy}, so a failed call does not look up its handler bean again.
 * Subclasses only adapt the AOP flavour: {@link DistributedLockInterceptor} for Spring's
 * proxies, {@link AnnotationDistributedLockAspect} for AspectJ weaving.
 *
 * <p>
 * The method's own exception propagates unchanged. A failing release only logs a warning:
 * the method's outcome stands, and the lease expires by itself.
 */
public abstract class DistributedLockAspectSupport implements BeanFactoryAware {

    private static final Log logger = LogFactory.getLog(DistributedLockAspectSupport.class);

    /**
     * {@code null} until {@link #configure} and after {@link #unconfigure}: calls then
     * fail.
     */
    private volatile @Nullable LockOperationSource operationSource;

    // Not @Nullable, though unset until configure: it sets these two before
    // operationSource, which calls read first.
    private volatile LockKeyResolver keyResolver;

    private volatile Supplier<LockService> lockService;

    /**
     * The failure strategy of each method, resolved on its first failed call and kept, as
     * for the operation. Soft references: a custom operation source that makes a new
     * operation per call must not fill it up.
     */
    private final Map<LockOperation, FailureStrategy> failureStrategies = new ConcurrentReferenceHashMap<>(64);

    /**
     * The rate-limited WARNs of calls skipped because the store was unavailable, shared
     * by all methods.
     */
    private final SkipWarnings skipWarnings = new SkipWarnings(logger);

    private boolean throwOnLeaseLost = true;

    private Duration defaultWaitTime = Duration.ofSeconds(3);

    private volatile @Nullable BeanFactory beanFactory;

    /**
     * @param operationSource finds the lock of each method
     * @param keyResolver resolves the key per call
     * @param lockService supplies the lock service on first use; looked up lazily so that
     * the interceptor, an infrastructure bean created early, does not drag Redis and its
     * configuration into early creation
     */
    protected DistributedLockAspectSupport(LockOperationSource operationSource, LockKeyResolver keyResolver,
            Supplier<LockService> lockService) {
        configure(operationSource, keyResolver, lockService);
    }

    /**
     * For an aspect that AspectJ instantiates itself (with no arguments), to be
     * {@linkplain #configure configured} from the Spring context afterwards.
     */
    protected DistributedLockAspectSupport() {
    }

    /**
     * Supplies what the calls need; the constructor with arguments does this, an AspectJ
     * aspect does it once the Spring context has its beans.
     * @param operationSource finds the lock of each method
     * @param keyResolver resolves the key per call
     * @param lockService supplies the lock service on first use
     */
    protected synchronized void configure(LockOperationSource operationSource, LockKeyResolver keyResolver,
            Supplier<LockService> lockService) {
        this.keyResolver = keyResolver;
        this.lockService = SingletonSupplier.of(lockService);
        this.failureStrategies.clear();
        // Written last: a call that sees the source sees the rest too.
        this.operationSource = operationSource;
    }

    /**
     * Undoes {@link #configure}, if it is still the configuration made with
     * {@code configuredWith}: later calls of locked methods fail rather than run without
     * their lock. A newer configuration (a second application context in the same JVM,
     * which took over the one aspect instance) stays.
     * @param configuredWith the operation source the configuration to undo was made with
     * @return whether it was undone
     */
    protected synchronized boolean unconfigure(LockOperationSource configuredWith) {
        if (operationSource != configuredWith) {
            return false;
        }
        this.operationSource = null;
        this.failureStrategies.clear();
        return true;
    }

    /**
     * Whether a call whose lease was lost before the method finished throws
     * {@link LockLostException} (or completes its stage or publisher with it);
     * {@code distributed-lock.throw-on-lease-lost}, {@code true} by default. Off, only
     * the watchdog's {@link io.github.distlock.LockLostEvent} and log line tell.
     * @param throwOnLeaseLost whether a lost lease fails the call
     */
    public void setThrowOnLeaseLost(boolean throwOnLeaseLost) {
        this.throwOnLeaseLost = throwOnLeaseLost;
    }

    /**
     * Whether a lost lease makes the call fail; see
     * {@link #setThrowOnLeaseLost(boolean)}.
     */
    public boolean isThrowOnLeaseLost() {
        return throwOnLeaseLost;
    }

    /**
     * The wait time of locks that name none ({@code distributed-lock.default-wait-time});
     * with several keys it bounds the wait for all of them together.
     * @param defaultWaitTime the configured default wait time
     */
    public void setDefaultWaitTime(Duration defaultWaitTime) {
        this.defaultWaitTime = defaultWaitTime;
    }

    /**
     * The clock that spaces out the WARNs of calls skipped because the store was
     * unavailable (one a minute per lock name); for tests, which move it on instead of
     * waiting a minute.
     */
    void setSkipWarningClock(InstantSource clock) {
        skipWarnings.useClock(clock);
    }

    /**
     * Where {@link LockFailureHandler} beans named by {@code failureHandler} are looked
     * up.
     */
    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
        this.failureStrategies.clear();
    }

    /**
     * Runs one call of a possibly locked method.
     * @param invoker proceeds with the call (the next interceptor or the method itself)
     * @param target the target object, not the proxy; {@code null} for a static method
     * (AspectJ)
     * @param method the invoked method
     * @param args the call's arguments
     * @return what the method returned; a stage or publisher that the lock follows; or
     * the failure strategy's value
     * @throws Throwable what the method threw, unchanged; {@link LockLostException} after
     * the method returned; or {@link LockTimeoutException}, {@link LockBackendException}
     * or {@link IllegalArgumentException} (bad key) without the method having been
     * invoked
     */
    protected @Nullable Object execute(Invoker invoker, @Nullable Object target, Method method, @Nullable Object[] args)
            throws Throwable {
        LockOperationSource source = operationSource;
        if (source == null) {
            throw new IllegalStateException("The @DistributedLock support (" + getClass().getSimpleName() + ") was "
                    + "called for " + method + " before it was configured, so the call cannot be locked. With "
                    + "distributed-lock.advice-mode=aspectj the Spring context configures the aspect: call locked "
                    + "methods only once the context has started, and use aspectj mode only together with the "
                    + "starter's auto-configuration.");
        }
        Class<?> targetClass = (target != null ? AopProxyUtils.ultimateTargetClass(target) : null);
        LockOperation operation = source.getLockOperation(method, targetClass);
        if (operation == null) {
            return invoker.invoke();
        }
        switch (operation.getResultKind()) {
            case VALUE:
                return operation.hasMultipleKeys() ? invokeInFrame(invoker, operation, args, target, false)
                        : invokeHolding(invoker, operation, args, target);
            case COMPLETION_STAGE:
                return invokeInFrame(invoker, operation, args, target, true);
            case PUBLISHER:
                return ReactiveLocks.lockOnSubscribe(this, invoker.repeatable(), operation, args, target);
            default:
                throw new IllegalStateException("Unknown result kind " + operation.getResultKind());
        }
    }

    /**
     * The common case, one key and a plain result, kept free of the bookkeeping the other
     * cases need.
     */
    private @Nullable Object invokeHolding(Invoker invoker, LockOperation operation, @Nullable Object[] args,
            @Nullable Object target) throws Throwable {
        String key = keyResolver.resolveKey(operation, args, target);
        HeldLocks held = HeldLocks.current();
        String backend = backendOf(operation);
        LockHold hold = held.find(key, backend);
        boolean interrupt = (operation.getLeaseLostAction() == LeaseLostAction.INTERRUPT);
        if (hold != null) {
            return invokeJoined(invoker, hold, interrupt);
        }
        LockHandle handle;
        try {
            handle = lockService.get().lock(operation.toRequest(key));
        }
        catch (LockTimeoutException | LockBackendException ex) {
            return lockUnavailable(operation, args, key, ex);
        }
        hold = new LockHold(key, backend, handle);
        held.push(hold);
        if (interrupt) {
            hold.armInterrupt();
        }
        Object result;
        try {
            result = invoker.invoke();
        }
        catch (Throwable ex) {
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

    /**
     * A nested call on a key this thread holds: runs within the outer hold, which the
     * outer call releases.
     */
    private static @Nullable Object invokeJoined(Invoker invoker, LockHold hold, boolean interrupt) throws Throwable {
        if (!interrupt) {
            return invoker.invoke();
        }
        hold.armInterrupt();
        try {
            return invoker.invoke();
        }
        finally {
            hold.disarmInterrupt();
        }
    }

    private static void leave(HeldLocks held, LockHold hold, boolean interrupt) {
        if (interrupt) {
            hold.disarmInterrupt();
        }
        held.remove(hold);
    }

    /**
     * The acquiring call is done: releases unless a joined asynchronous call still needs
     * the lock.
     */
    private @Nullable LockLostException letGo(LockOperation operation, LockHold hold) {
        ReleaseOutcome outcome = letGo(operation, hold, true);
        return (outcome == ReleaseOutcome.KEPT ? null
                : leaseLost(operation, hold.key(), "'" + hold.key() + "'", hold.handle(), outcome));
    }

    /**
     * Several keys with a plain result, or a {@link CompletionStage} result: acquires (or
     * joins) every key of the call, invokes, and lets go: at once for a plain result, a
     * {@code null} stage or a thrown exception; when the stage completes if
     * {@code untilComplete} and a stage came back.
     */
    private @Nullable Object invokeInFrame(Invoker invoker, LockOperation operation, @Nullable Object[] args,
            @Nullable Object target, boolean untilComplete) throws Throwable {
        LockFrame frame;
        try {
            frame = enter(operation, args, target, untilComplete);
        }
        catch (LockUnavailableException ex) {
            return lockUnavailable(operation, args, ex.getKey(), ex.getCause());
        }
        boolean interrupt = (operation.getLeaseLostAction() == LeaseLostAction.INTERRUPT);
        HeldLocks held = HeldLocks.current();
        frame.register(held, interrupt);
        Object result;
        try {
            result = invoker.invoke();
        }
        catch (Throwable ex) {
            frame.unregister(held, interrupt);
            suppress(ex, exit(frame));
            throw ex;
        }
        // For a stage, from here on the stage owns the lock, not this thread: later calls
        // on this thread must not
        // join it.
        frame.unregister(held, interrupt);
        if (untilComplete && result != null) {
            return CompletionStageLocks.follow(this, frame, (CompletionStage<?>) result);
        }
        LockLostException lost = exit(frame);
        if (lost != null) {
            throw lost;
        }
        return result;
    }

    /**
     * The name of the store the operation's locks are kept in, with the default one
     * resolved, so that a nested call naming the default backend joins an outer call that
     * names none.
     */
    private String backendOf(LockOperation operation) {
        if (operation.getBackend() != null) {
            return operation.getBackend();
        }
        LockService service = lockService.get();
        if (service instanceof RoutingLockService routing) {
            return routing.defaultBackend();
        }
        return (service instanceof DefaultLockService single ? single.backendName() : "");
    }

    /**
     * Acquires (or joins) every key of one call: the keys this thread already holds are
     * joined, the others are acquired through {@link LockService#lockAll(List)}, which
     * takes them in sorted order, all or none, within the call's wait time.
     * @param outlivesCall whether the call's work may go on after the method returned, so
     * a joined outer hold must be retained until then
     * @throws LockUnavailableException naming the key that could not be had; nothing new
     * is held then
     */
    LockFrame enter(LockOperation operation, @Nullable Object[] args, @Nullable Object target, boolean outlivesCall) {
        String[] keys = resolveKeys(operation, args, target);
        String backend = backendOf(operation);
        HeldLocks held = HeldLocks.current();
        LockHold[] holds = new LockHold[keys.length];
        boolean[] owned = new boolean[keys.length];
        List<LockRequest> toAcquire = new ArrayList<>(keys.length);
        for (int i = 0; i < keys.length; i++) {
            LockHold joined = held.find(keys[i], backend);
            if (joined != null) {
                holds[i] = joined;
            }
            else {
                owned[i] = true;
                toAcquire.add(operation.toRequest(keys[i]));
            }
        }
        if (!toAcquire.isEmpty()) {
            List<LockHandle> handles = acquire(operation, toAcquire);
            for (int i = 0, next = 0; i < keys.length; i++) {
                if (owned[i]) {
                    holds[i] = new LockHold(keys[i], backend, handles.get(next++));
                }
            }
        }
        if (outlivesCall) {
            // Only now that everything is had: a failed acquisition retained nothing, so
            // it has nothing to undo.
            for (int i = 0; i < keys.length; i++) {
                if (!owned[i]) {
                    holds[i].retain();
                }
            }
        }
        return new LockFrame(operation, holds, owned, outlivesCall);
    }

    /**
     * One key as a plain {@link LockService#lock}, several as one
     * {@link LockService#lockAll} with a shared wait.
     */
    private List<LockHandle> acquire(LockOperation operation, List<LockRequest> requests) {
        try {
            if (requests.size() == 1) {
                return List.of(lockService.get().lock(requests.get(0)));
            }
            Duration waitTime = (operation.getWaitTime() != null ? operation.getWaitTime() : defaultWaitTime);
            List<LockRequest> waiting = new ArrayList<>(requests.size());
            for (LockRequest request : requests) {
                waiting.add(request.withWaitTime(waitTime));
            }
            MultiLockHandle locks = lockService.get().lockAll(waiting);
            return locks.handles();
        }
        catch (LockTimeoutException | LockBackendException ex) {
            // A backend's exception names the key it failed on; only a custom one might
            // not.
            throw new LockUnavailableException(ex.getKey() != null ? ex.getKey() : requests.get(0).key(), ex);
        }
    }

    /**
     * The keys of one call: evaluated, then sorted and de-duplicated, so that calls
     * locking the same keys in any argument order take them in one global order and
     * cannot deadlock.
     */
    private String[] resolveKeys(LockOperation operation, @Nullable Object[] args, @Nullable Object target) {
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
     * The call is done with its locks (once, whoever asks first): lets go of each,
     * releasing those no one else needs, in reverse order.
     * @return the lost lease to report, or {@code null}
     */
    @Nullable LockLostException exit(LockFrame frame) {
        if (!frame.end()) {
            return null;
        }
        LockOperation operation = frame.operation();
        LockHold firstLost = null;
        ReleaseOutcome outcome = ReleaseOutcome.KEPT;
        StringBuilder lostKeys = null;
        for (int i = frame.size() - 1; i >= 0; i--) {
            if (!frame.uses(i)) {
                continue;
            }
            LockHold hold = frame.hold(i);
            ReleaseOutcome result = letGo(operation, hold, frame.owns(i));
            if (result != ReleaseOutcome.KEPT) {
                lostKeys = (lostKeys == null ? new StringBuilder() : lostKeys.insert(0, ", "));
                lostKeys.insert(0, "'" + hold.key() + "'");
                firstLost = hold;
                outcome = outcome.worse(result);
            }
        }
        if (firstLost == null || !frame.reportLoss()) {
            return null;
        }
        return leaseLost(operation, firstLost.key(), lostKeys.toString(), firstLost.handle(), outcome);
    }

    /**
     * {@link #exit}, for ends where nobody can receive the exception (cancellation): it
     * is logged instead.
     */
    void exitQuietly(LockFrame frame) {
        LockLostException lost = exit(frame);
        if (lost != null) {
            logger.warn(lost.getMessage());
        }
    }

    /**
     * The exception that an {@code onLeaseLost = INTERRUPT} call whose work runs
     * elsewhere ends with when its lease is lost. Counts as the call's report of the
     * loss.
     */
    LockLostException cancelledByLoss(LockFrame frame, LockHandle handle) {
        frame.reportLoss();
        return new LockLostException(handle.key(), "The lock '" + handle.key() + "' of "
                + frame.operation().describeMethod() + " was lost while its work ran (the key was deleted or taken "
                + "over, or the store was unreachable until the lease ran out), so onLeaseLost = INTERRUPT cancelled "
                + "the work. Another instance may run the guarded work now" + fencingTokenClause(handle) + ".");
    }

    /**
     * ", fencing token N" if the lost acquisition had one issued, else nothing: never
     * asks Redis.
     */
    private static String fencingTokenClause(LockHandle handle) {
        OptionalLong fence = handle.issuedFencingToken();
        return fence.isPresent() ? "; fencing token " + fence.getAsLong() : "";
    }

    /**
     * One user of a hold is done; the last one releases it.
     * @param report whether this call acquired the hold and so reports its loss
     * @return how the lease ended, as far as this call reports it
     */
    private static ReleaseOutcome letGo(LockOperation operation, LockHold hold, boolean report) {
        boolean ours = true;
        if (hold.letGo()) {
            ours = release(operation, hold);
        }
        if (!report) {
            return ReleaseOutcome.KEPT;
        }
        if (hold.handle().isLost()) {
            return ReleaseOutcome.LOST;
        }
        return (ours ? ReleaseOutcome.KEPT : ReleaseOutcome.EXPIRED);
    }

    /**
     * Never throws, so that neither the method's result nor its exception is masked by a
     * failed release.
     * @return {@code false} only if the lock was no longer ours; {@code true} if
     * released, or if Redis could not be asked (the lease then expires by itself, and
     * nothing says it was lost)
     */
    private static boolean release(LockOperation operation, LockHold hold) {
        try {
            return hold.handle().release();
        }
        catch (RuntimeException ex) {
            logger.warn("Could not release the lock '" + hold.key() + "' of " + operation.describeMethod()
                    + "; its lease expires by itself after the ttl: " + ex, ex);
            return true;
        }
    }

    private @Nullable LockLostException leaseLost(LockOperation operation, String key, String keys, LockHandle handle,
            ReleaseOutcome outcome) {
        if (!throwOnLeaseLost) {
            // A lease the watchdog found lost was already logged and published as a
            // LockLostEvent.
            if (outcome == ReleaseOutcome.EXPIRED) {
                logger.warn("The lock " + keys + " of " + operation.describeMethod() + " had already expired when "
                        + "the method returned, so another owner may have run concurrently. Raise the ttl, or keep "
                        + "the watchdog enabled so that the lease is renewed while the method runs.");
            }
            return null;
        }
        String why = (outcome == ReleaseOutcome.LOST
                ? "it was found lost while the method ran (its fixed lease expired, the key was deleted or taken "
                        + "over, or the store was unreachable until the lease ran out)"
                : "its lease had expired when the method returned (raise the ttl, or keep the watchdog enabled so "
                        + "that the lease is renewed while the method runs)");
        return new LockLostException(key, "The lock " + keys + " of " + operation.describeMethod() + " was lost "
                + "before the method finished: " + why + ". Another instance may have run the guarded work at the "
                + "same time; check or compensate" + fencingTokenClause(handle)
                + ". Set distributed-lock.throw-on-lease-lost=false to only log it and publish a LockLostEvent.");
    }

    /**
     * The failure strategy's value for a plain or stage result, checked against the
     * return type.
     */
    private @Nullable Object lockUnavailable(LockOperation operation, @Nullable Object[] args, String key,
            LockAcquisitionException cause) throws Throwable {
        Object value = fallback(operation, args, key, cause);
        Class<?> returnType = operation.getMethod().getReturnType();
        if (operation.getFailureHandler() != null && returnType != void.class
                && !ClassUtils.isAssignableValue(returnType, value)) {
            throw new IllegalStateException(
                    "The failure handler '" + operation.getFailureHandler() + "' of " + operation.describeMethod()
                            + " returned " + (value == null ? "null" : "a " + value.getClass().getName())
                            + ", which the method cannot return (" + returnType.getName()
                            + "). Return a value of that type, or throw.");
        }
        return value;
    }

    /**
     * What a call whose lock cannot be had returns instead: the failure handler's value,
     * the empty value ({@code SKIP}), or the acquisition failure itself thrown
     * ({@code THROW}).
     */
    @Nullable Object fallback(LockOperation op, @Nullable Object[] args, String key, LockAcquisitionException cause)
            throws Throwable {
        return failureStrategy(op).onUnavailable(args, key, cause);
    }

    /** The method's strategy, made on its first failed call and then reused. */
    private FailureStrategy failureStrategy(LockOperation operation) {
        FailureStrategy strategy = failureStrategies.get(operation);
        return (strategy != null ? strategy : failureStrategies.computeIfAbsent(operation,
                op -> FailureStrategy.of(op, () -> beanFactory, skipWarnings)));
    }

    /**
     * Attaches a lost lease to the exception that ends the call anyway, unless it is that
     * very exception.
     */
    static void suppress(Throwable failure, @Nullable LockLostException lost) {
        if (lost != null && failure != lost) {
            failure.addSuppressed(lost);
        }
    }

    /** Proceeds with the intercepted call. */
    @FunctionalInterface
    protected interface Invoker {

        /**
         * Invokes the next step of the call.
         * @return the method's result
         * @throws Throwable what the method threw
         */
        @Nullable Object invoke() throws Throwable;

        /**
         * An invoker that may be invoked later, and more than once: a {@code Mono} or
         * {@code Flux} method is invoked on each subscription, once its lock is held. The
         * default returns this invoker.
         * @return an invoker for repeated, deferred invocation
         */
        default Invoker repeatable() {
            return this;
        }

    }

}
