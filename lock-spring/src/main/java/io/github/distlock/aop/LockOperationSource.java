package io.github.distlock.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

/**
 * Finds the {@link LockOperation} of a method, the way Spring's
 * {@code CacheOperationSource} finds cache operations. Implementations parse and validate
 * each method once and cache the result, since they are asked on every call of a locked
 * method.
 */
public interface LockOperationSource {

    /**
     * Whether any method of {@code targetClass} may be locked. Called once per bean class
     * while its proxy is created; an implementation should validate every locked method
     * of the class here, so that a bad declaration fails the startup even on a method
     * that is never called.
     * @param targetClass the bean class
     * @return {@code false} if no method of the class needs the interceptor
     * @throws InvalidLockDefinitionException if a declaration of the class is invalid
     */
    boolean isCandidateClass(Class<?> targetClass);

    /**
     * The lock of a method.
     * @param method the invoked method, possibly from an interface
     * @param targetClass the class of the target object, or {@code null}
     * @return the operation, or {@code null} if the method is not locked
     * @throws InvalidLockDefinitionException if the method's declaration is invalid
     */
    @Nullable LockOperation getLockOperation(Method method, @Nullable Class<?> targetClass);

}
