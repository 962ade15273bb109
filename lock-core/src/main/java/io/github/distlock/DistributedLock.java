package io.github.distlock;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while holding a distributed lock, so at most one
 * instance of the application runs it at a time for the same key.
 *
 * <pre>{@code
 * &#64;DistributedLock(key = "'stock:' + #sku", ttl = "30s", waitTime = "2s")
 * public int deduct(String sku, int quantity) { ... }
 * }</pre>
 *
 * <p>
 * If the lock is not acquired within the wait time, or Redis cannot be reached, the
 * method is not invoked and the call throws {@link LockTimeoutException} or
 * {@link LockBackendException}, unless {@link #onBusy()}, {@link #onUnavailable()} or
 * {@link #onFailure()} says to skip it. An exception thrown by the method propagates
 * unchanged, and the lock is released either way.
 *
 * <p>
 * Expressions and durations are checked when the application context starts: a bad
 * expression or duration fails the startup with a message naming the method and the fix.
 * So does the annotation on a method no Spring proxy can intercept (private, static, or
 * final on a class-based proxy). A call from inside the bean ({@code this.method()})
 * bypasses the proxy and runs without the lock: call through the bean instead (for
 * example a {@code @Lazy} reference to itself), or weave the lock into the class with
 * {@code distributed-lock.advice-mode=aspectj}. By default the lock is taken outside
 * {@code @Transactional}, so it is released only after the transaction commits
 * ({@code distributed-lock.aspect-order}).
 *
 * <p>
 * A nested call on the same thread that resolves to a key this thread already holds
 * through the annotation joins that hold (no round trip; only the outermost call
 * releases). A method returning {@code CompletionStage} (or a reactive type such as
 * Reactor's {@code Mono}/{@code Flux}) keeps the lock until the result completes, not
 * merely until the method returns.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DistributedLock {

    /**
     * The lock key as a SpEL expression, evaluated per call against the method's
     * arguments: {@code "#orderId"}, {@code "#p0"} / {@code "#a0"},
     * {@code "#order.customer.id"}, {@code "'stock:' + #sku"},
     * {@code "@tenantContext.currentTenant() + ':' + #id"}. A literal needs quotes inside
     * the expression: {@code "'nightly-report'"}. Empty (the default) locks the method
     * itself under the name {@code SimpleClassName.method}. A call whose key is
     * {@code null}, blank or longer than {@code distributed-lock.max-key-length} fails
     * with {@link InvalidLockKeyException} without invoking the method.
     */
    String key() default "";

    /**
     * What metrics, traces and the Actuator call this lock, the same for every call: for
     * example {@code name = "invoice-export"}. Empty (the default) means
     * {@code SimpleClassName.method}. Unlike the key it is never evaluated: it becomes a
     * metric tag, and a tag per order id would make a time series per order.
     */
    String name() default "";

    /**
     * The lease length, as a duration with a unit such as {@code "30s"}, {@code "500ms"},
     * {@code "PT1M"} or a {@code ${placeholder}}; a bare number such as {@code "5000"} is
     * rejected, because its unit would be a guess. From 1 ms to 36500 days
     * ({@link LockDurations}). Empty means {@code distributed-lock.default-ttl}. With the
     * watchdog on (the default) the lease is renewed until the method returns, so the ttl
     * only bounds how long a crashed holder blocks others.
     */
    String ttl() default "";

    /**
     * How long to wait for the current holder, in the same format as {@link #ttl()} (with
     * a unit), at most 36500 days. {@code "0s"} tries once. Empty means
     * {@code distributed-lock.default-wait-time}.
     */
    String waitTime() default "";

    /**
     * The least time the lock stays held once taken, in the same format as {@link #ttl()}
     * (with a unit), even if the method returns sooner: ShedLock's
     * {@code lockAtLeastFor}. A method that returns before then leaves the lock to expire
     * when the minimum hold ends (its lease is cut to what is left, on its own token
     * only); one that returns later releases it as usual. It keeps a scheduled job that
     * takes milliseconds from running again on an instance whose clock is a little
     * behind:
     *
     * <pre>{@code
     * &#64;Scheduled(cron = "0 0 * * * *")
     * &#64;DistributedLock(key = "'hourly-report'", waitTime = "0s", onBusy = FailureAction.SKIP, minHold = "1m")
     * public void hourlyReport() { ... }
     * }</pre>
     *
     * Not longer than the ttl (or {@code distributed-lock.default-ttl}), and only on a
     * backend that can shorten a lease (Redis, Redlock over Redis nodes, the in-memory
     * backend): either mistake fails the startup, naming the method. Empty (the default)
     * means none.
     */
    String minHold() default "";

    /**
     * The name of the store that keeps this lock: {@code "redis"}, {@code "redlock"},
     * {@code "etcd"}, {@code "zookeeper"} (each when configured) or a
     * {@code NamedLockBackend} bean of the application. Fast Redis locks for most work, a
     * consensus store for the few where two holders would corrupt data:
     *
     * <pre>{@code
     * &#64;DistributedLock(key = "'ledger:' + #id", backend = "etcd")
     * public void post(String id, Entry entry) { ... }
     * }</pre>
     *
     * A name that is not configured fails the startup, listing the configured ones and
     * the property that would add it. Empty (the default) means
     * {@code distributed-lock.backend}.
     */
    String backend() default "";

    /**
     * Several keys, all locked or none: {@code keys = {"'account:' + #from", "'account:'
     * + #to"}}. Each is a SpEL expression like {@link #key()}. The evaluated keys are
     * de-duplicated and acquired in sorted order, so {@code transfer(a, b)} and
     * {@code transfer(b, a)} cannot deadlock; if one cannot be had, those already taken
     * are released. Use either {@code key} or {@code keys}, not both.
     */
    String[] keys() default {};

    /**
     * What happens, while the method runs, when its lease is found lost (key deleted or
     * taken over, the store unreachable until the lease ran out, or a fixed lease,
     * {@code watchdog = DISABLED}, run out). Either way a {@code LockLostEvent} is
     * published and a WARN logged; after the method returns, the call throws
     * {@link LockLostException} unless
     * {@code distributed-lock.throw-on-lease-lost=false}.
     */
    LeaseLostAction onLeaseLost() default LeaseLostAction.IGNORE;

    /**
     * What the call does when the lock cannot be had, busy or unavailable alike, unless
     * {@link #onBusy()} or {@link #onUnavailable()} says otherwise for its case.
     * {@link FailureAction#THROW} propagates the {@link LockAcquisitionException};
     * {@link FailureAction#SKIP} does not invoke the method and returns an empty value.
     * {@link FailureAction#DEFAULT} (the default) leaves each case to its own attribute,
     * then to {@code distributed-lock.on-busy} and
     * {@code distributed-lock.on-unavailable}, which both throw unless set.
     */
    FailureAction onFailure() default FailureAction.DEFAULT;

    /**
     * What the call does when another owner held the lock for the whole wait time
     * ({@link LockTimeoutException}). {@link FailureAction#DEFAULT} follows
     * {@link #onFailure()}, then {@code distributed-lock.on-busy}. A skip for this reason
     * is the ordinary "skip if locked" and is logged at DEBUG only.
     *
     * <pre>{@code
     * // another instance runs it: skip; Redis down: fail, so that the outage is seen
     * &#64;DistributedLock(key = "'nightly-report'", waitTime = "0s", onBusy = SKIP, onUnavailable = THROW)
     * }</pre>
     */
    FailureAction onBusy() default FailureAction.DEFAULT;

    /**
     * What the call does when the lock store could not be reached or answered with an
     * error ({@link LockBackendException}). {@link FailureAction#DEFAULT} follows
     * {@link #onFailure()}, then {@code distributed-lock.on-unavailable}. A skip for this
     * reason logs a WARN, at most one a minute per lock name (with the number of calls
     * skipped since the previous one), since no instance runs the work meanwhile.
     */
    FailureAction onUnavailable() default FailureAction.DEFAULT;

    /**
     * Name of a {@link LockFailureHandler} bean that decides what the call returns (or
     * throws) when the lock cannot be had. Overrides {@link #onFailure()},
     * {@link #onBusy()} and {@link #onUnavailable()}, which must then stay at
     * {@link FailureAction#DEFAULT}.
     */
    String failureHandler() default "";

    /**
     * Whether the lease watchdog renews this lock while the method runs.
     * {@link Watchdog#DEFAULT} follows {@code distributed-lock.watchdog.enabled}.
     */
    Watchdog watchdog() default Watchdog.DEFAULT;

    /** What to do with the running method when its lease is lost. */
    enum LeaseLostAction {

        /**
         * Let the method run on; the event, the log line and the exception afterwards
         * tell.
         */
        IGNORE,
        /**
         * Interrupt the thread running the method, so blocking calls in it stop early.
         */
        INTERRUPT

    }

    /** What a call returns when the lock cannot be had. */
    enum FailureAction {

        /**
         * Not set on this attribute: {@link #onBusy()} and {@link #onUnavailable()}
         * follow {@link #onFailure()}, and {@code onFailure} follows
         * {@code distributed-lock.on-busy} / {@code distributed-lock.on-unavailable}.
         */
        DEFAULT,
        /** Throw the {@link LockTimeoutException} or {@link LockBackendException}. */
        THROW,
        /**
         * Do not invoke the method and return an empty value: {@code null},
         * {@code Optional.empty()}, an empty collection, map or stream, a completed
         * future of {@code null}, or zero/false for a primitive.
         */
        SKIP

    }

    /** Per-method override of the lease watchdog. */
    enum Watchdog {

        /** Follow {@code distributed-lock.watchdog.enabled}. */
        DEFAULT,
        /** Renew the lease every ttl/3 until the method returns. */
        ENABLED,
        /**
         * Keep a fixed lease: it expires after the ttl even if the method is still
         * running.
         */
        DISABLED

    }

}
