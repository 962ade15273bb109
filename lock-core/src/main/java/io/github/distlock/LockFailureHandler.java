package io.github.distlock;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

/**
 * Decides what a {@link DistributedLock} call returns when its lock cannot be had.
 * Declare it as a bean and name it in {@link DistributedLock#failureHandler()}.
 *
 * <pre>{@code
 * &#64;Bean
 * LockFailureHandler cachedQuote(QuoteCache cache) {
 *     return failure -> cache.lastQuote((String) failure.arguments()[0]);   // or: throw failure.cause();
 * }
 * &#64;DistributedLock(key = "#symbol", failureHandler = "cachedQuote")
 * public Quote refresh(String symbol) { ... }
 * }</pre>
 */
@FunctionalInterface
public interface LockFailureHandler {

    /**
     * @param failure the call that could not get its lock
     * @return the value the call returns instead (must fit the method's return type)
     * @throws Throwable to make the call fail instead
     */
    @Nullable Object handle(LockFailure failure) throws Throwable;

    /**
     * A call that could not get its lock. The method was not invoked.
     *
     * @param method the annotated method
     * @param arguments the call's arguments
     * @param key the lock key that could not be had (for several keys, the first one that
     * failed)
     * @param cause {@link LockTimeoutException} or {@link LockBackendException}
     */
    record LockFailure(Method method, @Nullable Object[] arguments, String key, LockAcquisitionException cause) {
    }

}
