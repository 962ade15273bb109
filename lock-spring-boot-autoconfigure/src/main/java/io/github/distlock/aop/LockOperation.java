package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;

import io.github.distlock.LockRequest;

/**
 * One method's {@code @DistributedLock}, parsed and validated once by a {@link LockOperationSource} and then
 * shared by every call: the key in its cheapest evaluable form, and the resolved ttl, wait time and watchdog
 * setting ({@code null} where the configured default applies). Immutable.
 */
public final class LockOperation {

    private final Method method;

    private final Class<?> targetClass;

    private final LockKeyExpression key;

    private final Duration ttl;

    private final Duration waitTime;

    private final Boolean watchdog;

    private final String description;

    /**
     * @param method the method whose parameters the key expression refers to (the most specific one)
     * @param targetClass the class of the bean it is called on
     * @param key the parsed key
     * @param ttl the lease length, or {@code null} for {@code distributed-lock.default-ttl}
     * @param waitTime the wait time, or {@code null} for {@code distributed-lock.default-wait-time}
     * @param watchdog whether to renew the lease, or {@code null} for {@code distributed-lock.watchdog.enabled}
     */
    public LockOperation(Method method, Class<?> targetClass, LockKeyExpression key, Duration ttl, Duration waitTime,
            Boolean watchdog) {
        this.method = method;
        this.targetClass = targetClass;
        this.key = key;
        this.ttl = ttl;
        this.waitTime = waitTime;
        this.watchdog = watchdog;
        this.description = InvalidLockDefinitionException.describe(method, targetClass);
    }

    /** The annotated method, as seen on the target class. */
    public Method getMethod() {
        return method;
    }

    /** The class of the bean the method is called on. */
    public Class<?> getTargetClass() {
        return targetClass;
    }

    /** The parsed key. */
    public LockKeyExpression getKey() {
        return key;
    }

    /** The lease length, or {@code null} for the configured default. */
    public Duration getTtl() {
        return ttl;
    }

    /** The wait time, or {@code null} for the configured default. */
    public Duration getWaitTime() {
        return waitTime;
    }

    /** The watchdog override, or {@code null} to follow the configuration. */
    public Boolean getWatchdog() {
        return watchdog;
    }

    /**
     * The request for one call.
     *
     * @param resolvedKey the key this call resolved to
     * @return the request to pass to {@link io.github.distlock.LockService#lock(LockRequest)}
     */
    public LockRequest toRequest(String resolvedKey) {
        return new LockRequest(resolvedKey, ttl, waitTime, watchdog);
    }

    /** The method as {@code com.example.OrderService.place(String orderId)}, for messages. */
    public String describeMethod() {
        return description;
    }

    @Override
    public String toString() {
        return "@DistributedLock(key = \"" + key.getSource() + "\", ttl = " + ttl + ", waitTime = " + waitTime
                + ", watchdog = " + watchdog + ") on " + description;
    }
}
