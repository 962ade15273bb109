package io.github.distlock.aop;

import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

import io.github.distlock.LockService;

/**
 * The AOP Alliance interceptor for {@link io.github.distlock.DistributedLock @DistributedLock}; the work happens in
 * {@link DistributedLockAspectSupport}.
 */
public class DistributedLockInterceptor extends DistributedLockAspectSupport implements MethodInterceptor {

    /**
     * @param operationSource finds the lock of each method
     * @param keyResolver resolves the key per call
     * @param lockService supplies the lock service on first use
     */
    public DistributedLockInterceptor(LockOperationSource operationSource, LockKeyResolver keyResolver,
            Supplier<LockService> lockService) {
        super(operationSource, keyResolver, lockService);
    }

    /** Locks around the invocation if its method is locked, otherwise just proceeds. */
    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        return execute(invocation::proceed, invocation.getThis(), invocation.getMethod(), invocation.getArguments());
    }
}
