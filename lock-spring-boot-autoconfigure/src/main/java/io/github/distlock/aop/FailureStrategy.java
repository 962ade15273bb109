package io.github.distlock.aop;

import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.function.SingletonSupplier;

import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockFailureHandler;
import io.github.distlock.LockFailureHandler.LockFailure;

/**
 * What a call whose lock cannot be had returns instead, decided once per method from its annotation:
 * throw the acquisition failure, return the empty value, or ask the named {@link LockFailureHandler} bean.
 */
@FunctionalInterface
interface FailureStrategy {

    /**
     * @param args the call's arguments
     * @param key the key that could not be had
     * @param cause why
     * @return the value the call returns
     * @throws Throwable to make the call fail
     */
    Object onUnavailable(Object[] args, String key, LockAcquisitionException cause) throws Throwable;

    /**
     * The strategy of one method, from its annotation.
     *
     * @param operation the method's lock
     * @param beanFactory where a named handler is looked up, on the first failed call only
     */
    static FailureStrategy of(LockOperation operation, Supplier<BeanFactory> beanFactory) {
        String handlerName = operation.getFailureHandler();
        if (handlerName != null) {
            // Looked up on first use, then kept: the handler bean may not exist yet while proxies are created.
            Supplier<LockFailureHandler> handler = SingletonSupplier
                    .of(() -> handler(operation, handlerName, beanFactory.get()));
            return (args, key, cause) -> handler.get()
                    .handle(new LockFailure(operation.getMethod(), args, key, cause));
        }
        if (operation.getFailureAction() == FailureAction.SKIP) {
            Log logger = LogFactory.getLog(DistributedLockAspectSupport.class);
            return (args, key, cause) -> {
                if (logger.isDebugEnabled()) {
                    logger.debug("Skipped " + operation.describeMethod() + " (onFailure = SKIP): "
                            + cause.getMessage());
                }
                return operation.emptyResult();
            };
        }
        return (args, key, cause) -> {
            throw cause;
        };
    }

    private static LockFailureHandler handler(LockOperation operation, String name, BeanFactory factory) {
        if (factory == null) {
            throw new IllegalStateException("Cannot look up the failure handler '" + name + "' of "
                    + operation.describeMethod() + ": the interceptor has no bean factory. Declare it as a bean.");
        }
        return factory.getBean(name, LockFailureHandler.class);
    }
}
