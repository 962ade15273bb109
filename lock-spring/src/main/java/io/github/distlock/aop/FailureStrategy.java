package io.github.distlock.aop;

import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.function.SingletonSupplier;

import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockFailureHandler;
import io.github.distlock.LockFailureHandler.LockFailure;

/**
 * What a call whose lock cannot be had returns instead, decided once per method from its
 * annotation: throw the acquisition failure, return the empty value (each for a busy lock
 * and for an unavailable store as the {@link LockOperation} resolved them), or ask the
 * named {@link LockFailureHandler} bean.
 */
@FunctionalInterface
interface FailureStrategy {

    /**
     * @param args the call's arguments
     * @param key the key that could not be had
     * @param ex why the lock cannot be had
     * @return the value the call returns
     * @throws Throwable to make the call fail
     */
    @Nullable Object onUnavailable(@Nullable Object[] args, String key, LockAcquisitionException ex) throws Throwable;

    /**
     * The strategy of one method, from its annotation.
     * @param operation the method's lock
     * @param beanFactory where a named handler is looked up, on the first failed call
     * only
     * @param skipWarnings where a skip because the store was unavailable is reported
     */
    static FailureStrategy of(LockOperation operation, Supplier<@Nullable BeanFactory> beanFactory,
            SkipWarnings skipWarnings) {
        String handlerName = operation.getFailureHandler();
        if (handlerName != null) {
            // Looked up on first use, then kept: the handler bean may not exist yet while
            // proxies are created.
            Supplier<LockFailureHandler> handler = SingletonSupplier
                .of(() -> handler(operation, handlerName, beanFactory.get()));
            return (args, key, cause) -> handler.get().handle(new LockFailure(operation.getMethod(), args, key, cause));
        }
        boolean skipBusy = (operation.getBusyAction() == FailureAction.SKIP);
        boolean skipUnavailable = (operation.getUnavailableAction() == FailureAction.SKIP);
        if (!skipBusy && !skipUnavailable) {
            return (args, key, cause) -> {
                throw cause;
            };
        }
        Log logger = LogFactory.getLog(DistributedLockAspectSupport.class);
        return (args, key, cause) -> {
            // The interceptor hands over only these two: a timeout (busy) and a backend
            // failure (unavailable).
            if (cause instanceof LockBackendException) {
                if (!skipUnavailable) {
                    throw cause;
                }
                skipWarnings.skippedUnavailable(operation, key, cause);
                return operation.emptyResult();
            }
            if (!skipBusy) {
                throw cause;
            }
            if (logger.isDebugEnabled()) {
                // The ordinary "skip if locked": another instance is doing the work.
                logger.debug("Skipped " + operation.describeMethod() + " (onBusy = SKIP): " + cause.getMessage());
            }
            return operation.emptyResult();
        };
    }

    private static LockFailureHandler handler(LockOperation operation, String name, @Nullable BeanFactory factory) {
        if (factory == null) {
            throw new IllegalStateException("Cannot look up the failure handler '" + name + "' of "
                    + operation.describeMethod() + ": the interceptor has no bean factory. Declare it as a bean.");
        }
        return factory.getBean(name, LockFailureHandler.class);
    }

}
