package io.github.distlock.aop;

import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.ProxyMethodInvocation;

import io.github.distlock.LockService;

/**
 * The AOP Alliance interceptor for
 * {@link io.github.distlock.DistributedLock @DistributedLock}; the work happens in
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
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Invoker invoker = (invocation instanceof ProxyMethodInvocation proxyInvocation
                ? new ProceedingInvoker(proxyInvocation) : invocation::proceed);
        return execute(invoker, invocation.getThis(), invocation.getMethod(), invocation.getArguments());
    }

    /**
     * Proceeds with a Spring AOP invocation, and can do so again later for each
     * subscription of a publisher.
     */
    private static final class ProceedingInvoker implements Invoker {

        private final ProxyMethodInvocation invocation;

        ProceedingInvoker(ProxyMethodInvocation invocation) {
            this.invocation = invocation;
        }

        @Override
        public @Nullable Object invoke() throws Throwable {
            return invocation.proceed();
        }

        @Override
        public Invoker repeatable() {
            // An invocation proceeds down its interceptor chain only once; each
            // subscription proceeds on its own
            // copy of one taken now, before anything proceeded.
            ProxyMethodInvocation template = (ProxyMethodInvocation) invocation.invocableClone();
            return () -> ((ProxyMethodInvocation) template.invocableClone()).proceed();
        }

    }

}
