package io.github.distlock.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.ClassFilter;
import org.springframework.aop.support.StaticMethodMatcherPointcut;

/**
 * Matches the methods for which the {@link LockOperationSource} has a lock. Its class
 * filter asks the source about the whole class first, which is where every declaration of
 * the class is validated while the proxy is created.
 */
final class DistributedLockPointcut extends StaticMethodMatcherPointcut {

    private final LockOperationSource operationSource;

    DistributedLockPointcut(LockOperationSource operationSource) {
        this.operationSource = operationSource;
        setClassFilter(new LockOperationSourceClassFilter());
    }

    @Override
    public boolean matches(Method method, Class<?> targetClass) {
        return operationSource.getLockOperation(method, targetClass) != null;
    }

    @Override
    public boolean equals(@Nullable Object other) {
        return (this == other
                || (other instanceof DistributedLockPointcut that && operationSource.equals(that.operationSource)));
    }

    @Override
    public int hashCode() {
        return DistributedLockPointcut.class.hashCode();
    }

    @Override
    public String toString() {
        return getClass().getName() + ": " + operationSource;
    }

    /**
     * Lets the proxy creator skip classes without locked methods before it looks at each
     * method.
     */
    private final class LockOperationSourceClassFilter implements ClassFilter {

        @Override
        public boolean matches(Class<?> clazz) {
            return operationSource.isCandidateClass(clazz);
        }

    }

}
