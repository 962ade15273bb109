package io.github.distlock.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

/**
 * A {@link io.github.distlock.DistributedLock @DistributedLock} declaration is invalid:
 * its key expression does not parse or refers to something that does not exist, a
 * duration does not parse, has no unit or is out of range, attributes contradict each
 * other or name a bean that does not exist, or the method is one that no proxy can
 * intercept (private, static, or final on a class-based proxy), so every call would run
 * without the lock. Thrown while the application context starts (when the bean's proxy is
 * created), so a typo fails the startup instead of every call. The message names the
 * class, the method, the attribute, the bad value and the fix.
 */
public class InvalidLockDefinitionException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final transient Method method;

    private final @Nullable String attribute;

    private final @Nullable String value;

    private final String problem;

    /**
     * @param method the annotated method
     * @param targetClass the class whose bean declares it
     * @param attribute the annotation attribute at fault, such as {@code key},
     * {@code keys} or {@code ttl}
     * @param value the attribute's value as written
     * @param problem what is wrong with the value and how to fix it
     * @param cause the underlying parse or resolution failure, if any
     */
    public InvalidLockDefinitionException(Method method, Class<?> targetClass, String attribute, String value,
            String problem, @Nullable Throwable cause) {
        super("Invalid @DistributedLock on " + describe(method, targetClass) + ": " + attribute + " = \"" + value
                + "\" " + problem, cause);
        this.method = method;
        this.attribute = attribute;
        this.value = value;
        this.problem = problem;
    }

    /**
     * For a declaration whose attributes are fine but that cannot take effect, such as
     * one on a final method of a class-based proxy: no attribute is at fault.
     * @param method the annotated method
     * @param targetClass the class whose bean declares it, or {@code null} if there is
     * none (a static method woven by AspectJ): then the method's declaring class is named
     * @param problem why the declaration cannot work and how to fix it
     */
    public InvalidLockDefinitionException(Method method, @Nullable Class<?> targetClass, String problem) {
        super("Invalid @DistributedLock on " + describe(method, targetClass) + ": " + problem);
        this.method = method;
        this.attribute = null;
        this.value = null;
        this.problem = problem;
    }

    /** The annotated method. */
    public Method getMethod() {
        return method;
    }

    /**
     * The annotation attribute at fault, such as {@code key}, {@code keys}, {@code ttl}
     * or {@code failureHandler}; {@code null} when the declaration as a whole cannot take
     * effect (an unguarded method).
     */
    public @Nullable String getAttribute() {
        return attribute;
    }

    /**
     * The attribute's value as written in the annotation; {@code null} when no attribute
     * is at fault.
     */
    public @Nullable String getValue() {
        return value;
    }

    /**
     * What is wrong with the value and how to fix it, without the method and attribute.
     */
    public String getProblem() {
        return problem;
    }

    /**
     * A readable name for a method, such as
     * {@code com.example.OrderService.place(String orderId, int quantity)}.
     * @param method the method
     * @param targetClass the class it is called on, or {@code null} for its declaring
     * class
     * @return the name used in messages
     */
    static String describe(Method method, @Nullable Class<?> targetClass) {
        Class<?> owner = (targetClass != null ? targetClass : method.getDeclaringClass());
        StringBuilder text = new StringBuilder(owner.getName()).append('.').append(method.getName()).append('(');
        java.lang.reflect.Parameter[] parameters = method.getParameters();
        for (int i = 0; i < parameters.length; i++) {
            if (i > 0) {
                text.append(", ");
            }
            text.append(parameters[i].getType().getSimpleName());
            if (parameters[i].isNamePresent()) {
                text.append(' ').append(parameters[i].getName());
            }
        }
        return text.append(')').toString();
    }

}
