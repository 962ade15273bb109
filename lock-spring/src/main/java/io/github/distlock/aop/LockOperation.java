package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.ClassUtils;

import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.DistributedLock.LeaseLostAction;
import io.github.distlock.LockRequest;

/**
 * One method's {@code @DistributedLock}, parsed and validated once by a
 * {@link LockOperationSource} and then shared by every call: the key (or keys) in their
 * cheapest evaluable form, the resolved ttl, wait time and watchdog setting ({@code null}
 * where the configured default applies), what to do on a lost lease and on a failed
 * acquisition (for a busy lock and for an unavailable store, each already resolved to
 * throw or skip), and how the method's result is followed ({@link ResultKind}).
 * Everything a call needs is decided here, so the per-call work stays small. Immutable.
 */
public final class LockOperation {

    /**
     * Whether Project Reactor is present: the lock follows a reactive result with Reactor
     * operators, so reactive results (of any library Spring's
     * {@link ReactiveAdapterRegistry} adapts) are recognised only then.
     */
    private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
            LockOperation.class.getClassLoader());

    private final Method method;

    private final Class<?> targetClass;

    private final LockKeyExpression key;

    private final LockKeyExpression @Nullable [] keys;

    private final @Nullable Duration ttl;

    private final @Nullable Duration waitTime;

    /** Set once, by {@link #minHold(Duration)}, before the operation is published. */
    private @Nullable Duration minHold;

    /** Set once, by {@link #backend(String)}, before the operation is published. */
    private @Nullable String backend;

    private final @Nullable Boolean watchdog;

    private final LeaseLostAction leaseLostAction;

    private final FailureAction failureAction;

    private final FailureAction busyAction;

    private final FailureAction unavailableAction;

    private final LockRequest.SkipOn skipOn;

    private final @Nullable String failureHandler;

    private final ResultKind resultKind;

    private final @Nullable ReactiveAdapter reactiveAdapter;

    private final boolean resultReplaceable;

    private final Supplier<@Nullable Object> emptyResult;

    private final String description;

    private final String name;

    /**
     * An operation whose busy and unavailable cases both follow {@code failureAction};
     * {@code DEFAULT} throws.
     * @param method the method whose parameters the key expressions refer to (the most
     * specific one)
     * @param targetClass the class of the bean it is called on
     * @param key the parsed key; with several keys, the first of them
     * @param keys all parsed keys when the annotation names several ({@code keys}),
     * otherwise {@code null}
     * @param ttl the lease length, or {@code null} for
     * {@code distributed-lock.default-ttl}
     * @param waitTime the wait time, or {@code null} for
     * {@code distributed-lock.default-wait-time}
     * @param watchdog whether to renew the lease, or {@code null} for
     * {@code distributed-lock.watchdog.enabled}
     * @param leaseLostAction what to do with the running method when its lease is lost
     * @param failureAction what the call returns when the lock cannot be had
     * @param failureHandler the name of the {@link io.github.distlock.LockFailureHandler}
     * bean that decides instead, or {@code null}
     * @param name what metrics and traces call this lock
     * ({@link io.github.distlock.DistributedLock#name()}), or {@code null} for
     * {@code SimpleClassName.method}
     */
    public LockOperation(Method method, Class<?> targetClass, LockKeyExpression key,
            LockKeyExpression @Nullable [] keys, @Nullable Duration ttl, @Nullable Duration waitTime,
            @Nullable Boolean watchdog, LeaseLostAction leaseLostAction, FailureAction failureAction,
            @Nullable String failureHandler, @Nullable String name) {
        this(method, targetClass, key, keys, ttl, waitTime, watchdog, leaseLostAction, failureAction, failureAction,
                failureAction, failureHandler, name);
    }

    /**
     * @param method the method whose parameters the key expressions refer to (the most
     * specific one)
     * @param targetClass the class of the bean it is called on
     * @param key the parsed key; with several keys, the first of them
     * @param keys all parsed keys when the annotation names several ({@code keys}),
     * otherwise {@code null}
     * @param ttl the lease length, or {@code null} for
     * {@code distributed-lock.default-ttl}
     * @param waitTime the wait time, or {@code null} for
     * {@code distributed-lock.default-wait-time}
     * @param watchdog whether to renew the lease, or {@code null} for
     * {@code distributed-lock.watchdog.enabled}
     * @param leaseLostAction what to do with the running method when its lease is lost
     * @param failureAction the annotation's {@code onFailure}, as declared (for messages)
     * @param busyAction what the call does when another owner held the lock for the whole
     * wait time, resolved from {@code onBusy}, {@code onFailure} and
     * {@code distributed-lock.on-busy}; {@code DEFAULT} throws
     * @param unavailableAction what the call does when the lock store failed, resolved
     * the same way from {@code onUnavailable}; {@code DEFAULT} throws
     * @param failureHandler the name of the {@link io.github.distlock.LockFailureHandler}
     * bean that decides instead, or {@code null}; then the actions are not used
     * @param name what metrics and traces call this lock
     * ({@link io.github.distlock.DistributedLock#name()}), or {@code null} for
     * {@code SimpleClassName.method}
     */
    public LockOperation(Method method, Class<?> targetClass, LockKeyExpression key,
            LockKeyExpression @Nullable [] keys, @Nullable Duration ttl, @Nullable Duration waitTime,
            @Nullable Boolean watchdog, LeaseLostAction leaseLostAction, FailureAction failureAction,
            FailureAction busyAction, FailureAction unavailableAction, @Nullable String failureHandler,
            @Nullable String name) {
        this.method = method;
        this.targetClass = targetClass;
        this.key = key;
        this.keys = (keys != null && keys.length > 1 ? keys.clone() : null);
        this.ttl = ttl;
        this.waitTime = waitTime;
        this.watchdog = watchdog;
        this.leaseLostAction = leaseLostAction;
        this.failureAction = failureAction;
        this.failureHandler = (failureHandler == null || failureHandler.isEmpty() ? null : failureHandler);
        this.busyAction = (busyAction == FailureAction.SKIP ? FailureAction.SKIP : FailureAction.THROW);
        this.unavailableAction = (unavailableAction == FailureAction.SKIP ? FailureAction.SKIP : FailureAction.THROW);
        // A handler decides for itself, so its calls are never counted as skipped.
        this.skipOn = (this.failureHandler != null ? LockRequest.SkipOn.NEVER : LockRequest.SkipOn
            .of(this.busyAction == FailureAction.SKIP, this.unavailableAction == FailureAction.SKIP));
        Class<?> returnType = method.getReturnType();
        this.reactiveAdapter = (REACTOR_PRESENT && !CompletionStage.class.isAssignableFrom(returnType)
                ? ReactiveTypes.adapterFor(returnType) : null);
        this.resultKind = (CompletionStage.class.isAssignableFrom(returnType) ? ResultKind.COMPLETION_STAGE
                : reactiveAdapter != null ? ResultKind.PUBLISHER : ResultKind.VALUE);
        // A stage the lock follows is replaced by one that completes after the release;
        // only possible when a
        // CompletableFuture fits the declared type (not for a custom CompletableFuture
        // subclass).
        this.resultReplaceable = returnType.isAssignableFrom(CompletableFuture.class);
        this.emptyResult = (reactiveAdapter != null ? ReactiveTypes.emptyOf(reactiveAdapter)
                : EmptyReturnValues.of(returnType));
        this.description = InvalidLockDefinitionException.describe(method, targetClass);
        this.name = (name == null || name.isEmpty() ? targetClass.getSimpleName() + "." + method.getName() : name);
    }

    /**
     * What metrics, traces and the Actuator call this lock: the annotation's name, or
     * {@code SimpleClassName.method}.
     */
    public String getName() {
        return name;
    }

    /** The annotated method, as seen on the target class. */
    public Method getMethod() {
        return method;
    }

    /** The class of the bean the method is called on. */
    public Class<?> getTargetClass() {
        return targetClass;
    }

    /** The parsed key; with several keys, the first of them. */
    public LockKeyExpression getKey() {
        return key;
    }

    /**
     * Whether the annotation names several keys ({@code keys}), all of which are locked.
     */
    public boolean hasMultipleKeys() {
        return keys != null;
    }

    /**
     * All parsed keys: the one {@link #getKey()}, or each of {@code keys} in declaration
     * order.
     */
    public LockKeyExpression[] getKeys() {
        return (keys != null ? keys.clone() : new LockKeyExpression[] { key });
    }

    /**
     * The parsed keys without a copy, for the per-call path; {@code null} for a single
     * key.
     */
    LockKeyExpression @Nullable [] multipleKeys() {
        return keys;
    }

    /** The lease length, or {@code null} for the configured default. */
    public @Nullable Duration getTtl() {
        return ttl;
    }

    /** The wait time, or {@code null} for the configured default. */
    public @Nullable Duration getWaitTime() {
        return waitTime;
    }

    /** The watchdog override, or {@code null} to follow the configuration. */
    public @Nullable Boolean getWatchdog() {
        return watchdog;
    }

    /** What happens to the running method when its lease is lost. */
    public LeaseLostAction getLeaseLostAction() {
        return leaseLostAction;
    }

    /**
     * The annotation's {@code onFailure} as declared; {@link #getBusyAction()} and the
     * next say what applies.
     */
    public FailureAction getFailureAction() {
        return failureAction;
    }

    /**
     * What the call does, when no failure handler is named, if another owner held the
     * lock for the whole wait time: {@link FailureAction#THROW} or
     * {@link FailureAction#SKIP}, never {@code DEFAULT}.
     */
    public FailureAction getBusyAction() {
        return busyAction;
    }

    /**
     * What the call does, when no failure handler is named, if the lock store could not
     * be reached or failed: {@link FailureAction#THROW} or {@link FailureAction#SKIP},
     * never {@code DEFAULT}.
     */
    public FailureAction getUnavailableAction() {
        return unavailableAction;
    }

    /**
     * The name of the {@link io.github.distlock.LockFailureHandler} bean, or
     * {@code null}.
     */
    public @Nullable String getFailureHandler() {
        return failureHandler;
    }

    /**
     * How the lock follows the method's result, decided once from the declared return
     * type.
     */
    public ResultKind getResultKind() {
        return resultKind;
    }

    /**
     * Whether a {@link ResultKind#COMPLETION_STAGE} result may be replaced by a
     * {@code CompletableFuture} that completes after the release (and can carry a lost
     * lease); otherwise the lock only follows the original stage.
     */
    boolean isResultReplaceable() {
        return resultReplaceable;
    }

    /**
     * The value a skipped call returns: empty, zero or {@code null}, fitting the declared
     * return type.
     */
    @Nullable Object emptyResult() {
        return emptyResult.get();
    }

    /**
     * The request for one call.
     * @param resolvedKey the key this call resolved to
     * @return the request to pass to
     * {@link io.github.distlock.LockService#lock(LockRequest)}
     */
    public LockRequest toRequest(String resolvedKey) {
        // The method releases the lock when it returns: a fixed lease that runs out
        // first ran out while it ran, a lost lock like any other.
        return new LockRequest(resolvedKey, ttl, waitTime, watchdog, false, name, skipOn, minHold, backend,
                Boolean.TRUE);
    }

    /**
     * The least time the lock stays held
     * ({@link io.github.distlock.DistributedLock#minHold()}), or {@code null} for none.
     */
    public @Nullable Duration getMinHold() {
        return minHold;
    }

    /**
     * The name of the backend that keeps the lock
     * ({@link io.github.distlock.DistributedLock#backend()}), or {@code null} for the
     * default one.
     */
    public @Nullable String getBackend() {
        return backend;
    }

    /**
     * Sets the backend; called by the operation source right after construction.
     * @param backend the backend's name, or {@code null} for the default one
     * @return this operation
     */
    LockOperation backend(@Nullable String backend) {
        this.backend = backend;
        return this;
    }

    /**
     * Sets the minimum hold; called by the operation source right after construction.
     * @param minHold the least time the lock stays held, or {@code null} for none
     * @return this operation
     */
    LockOperation minHold(@Nullable Duration minHold) {
        this.minHold = (minHold == null || minHold.isZero() ? null : minHold);
        return this;
    }

    /**
     * The method as {@code com.example.OrderService.place(String orderId)}, for messages.
     */
    public String describeMethod() {
        return description;
    }

    @Override
    public String toString() {
        String keyText = (keys != null ? "keys = " + Arrays.toString(keys) : "key = \"" + key.getSource() + "\"");
        return "@DistributedLock(" + keyText + ", ttl = " + ttl + ", waitTime = " + waitTime
                + (minHold != null ? ", minHold = " + minHold : "") + (backend != null ? ", backend = " + backend : "")
                + ", watchdog = " + watchdog + ", onLeaseLost = " + leaseLostAction + ", onBusy = " + busyAction
                + ", onUnavailable = " + unavailableAction
                + (failureHandler != null ? ", failureHandler = " + failureHandler : "") + ") on " + description;
    }

    /**
     * For a {@link ResultKind#PUBLISHER} result: how it converts to and from a Reactive
     * Streams {@code Publisher}; {@code null} otherwise.
     */
    @Nullable ReactiveAdapter getReactiveAdapter() {
        return reactiveAdapter;
    }

    /** How the lock follows a method's result. */
    public enum ResultKind {

        /** Held until the method returns (or throws). */
        VALUE,

        /**
         * Held until the returned {@link CompletionStage} completes, normally or
         * exceptionally.
         */
        COMPLETION_STAGE,

        /**
         * A deferred reactive type that Spring's {@link ReactiveAdapterRegistry} adapts
         * (Reactor's {@code Mono} and {@code Flux}, a {@code Publisher}, RxJava, Mutiny,
         * ...): acquired on subscription, held until it terminates or is cancelled. Needs
         * Reactor on the classpath.
         */
        PUBLISHER

    }

    /**
     * Touches Reactor types through the registry; loaded only when Reactor is present.
     */
    private static final class ReactiveTypes {

        static @Nullable ReactiveAdapter adapterFor(Class<?> returnType) {
            ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType);
            // Exact types only: the lock returns the adapter's type, which would not fit
            // a declared subclass. And
            // deferred ones only: a type whose work starts without a subscriber cannot be
            // locked on subscription.
            if (adapter == null || adapter.getReactiveType() != returnType || !adapter.getDescriptor().isDeferred()) {
                return null;
            }
            return adapter;
        }

        /**
         * The empty value of a skipped call: the adapter's type made from an empty
         * publisher, per call.
         */
        static Supplier<@Nullable Object> emptyOf(ReactiveAdapter adapter) {
            return () -> adapter.fromPublisher(reactor.core.publisher.Mono.empty());
        }

    }

}
