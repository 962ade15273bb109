package io.github.distlock.aop;

import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;

/**
 * Applies the {@link DistributedLockInterceptor} to every method with a
 * {@link LockOperation}. Its order ({@code distributed-lock.aspect-order}) places the
 * lock relative to other advice: the default runs just outside {@code @Transactional}, so
 * the lock is released only after the commit.
 */
public class DistributedLockAdvisor extends AbstractPointcutAdvisor {

    private static final long serialVersionUID = 1L;

    private final transient Pointcut pointcut;

    private final transient Advice advice;

    /**
     * @param operationSource decides which methods are locked
     * @param interceptor the advice for those methods
     * @param order the advisor's order; lower runs further outside
     */
    public DistributedLockAdvisor(LockOperationSource operationSource, DistributedLockInterceptor interceptor,
            int order) {
        this.pointcut = new DistributedLockPointcut(operationSource);
        this.advice = interceptor;
        setOrder(order);
    }

    /** Matches the methods the operation source has a lock for. */
    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    /** The {@link DistributedLockInterceptor}. */
    @Override
    public Advice getAdvice() {
        return advice;
    }

}
