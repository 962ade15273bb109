package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.util.function.SingletonSupplier;

import io.github.distlock.LockHandle;
import io.github.distlock.LockService;

/**
 * The logic behind {@code @DistributedLock}, independent of the AOP flavour (like Spring's
 * {@code CacheAspectSupport}): resolve the key, acquire through {@link LockService} before invoking, release in all
 * cases.
 *
 * <p>If the key is null or blank, or the lock is not acquired ({@link io.github.distlock.LockTimeoutException},
 * {@link io.github.distlock.LockBackendException}), the method is not invoked. The method's own exception
 * propagates unchanged. A failing release only logs a warning: the method's outcome stands, and the lease
 * expires by itself.
 */
public abstract class DistributedLockAspectSupport {

    private static final Log logger = LogFactory.getLog(DistributedLockAspectSupport.class);

    private final LockOperationSource operationSource;

    private final LockKeyResolver keyResolver;

    private final Supplier<LockService> lockService;

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
     * Runs one call of a possibly locked method.
     *
     * @param invoker proceeds with the call (the next interceptor or the method itself)
     * @param target the target object, not the proxy
     * @param method the invoked method
     * @param args the call's arguments
     * @return what the method returned
     * @throws Throwable what the method threw, unchanged; or {@link io.github.distlock.LockTimeoutException},
     *         {@link io.github.distlock.LockBackendException} or {@link IllegalArgumentException} (bad key)
     *         without the method having been invoked
     */
    protected Object execute(Invoker invoker, Object target, Method method, Object[] args) throws Throwable {
        Class<?> targetClass = (target != null ? AopProxyUtils.ultimateTargetClass(target) : null);
        LockOperation operation = operationSource.getLockOperation(method, targetClass);
        if (operation == null) {
            return invoker.invoke();
        }
        String key = keyResolver.resolveKey(operation, args, target);
        LockHandle handle = lockService.get().lock(operation.toRequest(key));
        try {
            return invoker.invoke();
        } finally {
            release(handle, operation, key);
        }
    }

    /** Never throws, so that neither the method's result nor its exception is masked by a failed release. */
    private static void release(LockHandle handle, LockOperation operation, String key) {
        try {
            if (!handle.release()) {
                logger.warn("The lock '" + key + "' of " + operation.describeMethod() + " had already expired when "
                        + "the method returned, so another owner may have run concurrently. Raise the ttl, or keep "
                        + "the watchdog enabled so that the lease is renewed while the method runs.");
            }
        } catch (RuntimeException ex) {
            logger.warn("Could not release the lock '" + key + "' of " + operation.describeMethod()
                    + "; its lease expires by itself after the ttl: " + ex, ex);
        }
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
    }
}
