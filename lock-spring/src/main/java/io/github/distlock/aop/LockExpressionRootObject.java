package io.github.distlock.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

/**
 * The root object of a {@code @DistributedLock} key expression. Besides the method's
 * arguments (as {@code #name}, {@code #p0} or {@code #a0}), an expression can read these
 * properties, either bare ({@code methodName}) or as {@code #root.methodName}:
 * <ul>
 * <li>{@code method}: the invoked {@link Method}</li>
 * <li>{@code methodName}: its name</li>
 * <li>{@code target}: the target object (not the proxy)</li>
 * <li>{@code targetClass}: the target's class</li>
 * <li>{@code args}: the arguments as an array</li>
 * </ul>
 * Any other bare word is almost always a literal that lacks its quotes, which is why it
 * fails the startup.
 */
public final class LockExpressionRootObject {

    private final Method method;

    private final @Nullable Object[] args;

    private final @Nullable Object target;

    private final Class<?> targetClass;

    /**
     * @param method the invoked method
     * @param args its arguments
     * @param target the target object, or {@code null} when there is none
     * @param targetClass the target's class
     */
    public LockExpressionRootObject(Method method, @Nullable Object[] args, @Nullable Object target,
            Class<?> targetClass) {
        this.method = method;
        this.args = args;
        this.target = target;
        this.targetClass = targetClass;
    }

    /** The invoked method. */
    public Method getMethod() {
        return method;
    }

    /** The invoked method's name. */
    public String getMethodName() {
        return method.getName();
    }

    /** The arguments of this call; an argument may be {@code null}. */
    public @Nullable Object[] getArgs() {
        return args;
    }

    /** The target object, not the proxy; {@code null} when there is none. */
    public @Nullable Object getTarget() {
        return target;
    }

    /** The class of the target object. */
    public Class<?> getTargetClass() {
        return targetClass;
    }

}
