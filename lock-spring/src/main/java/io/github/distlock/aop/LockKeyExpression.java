package io.github.distlock.aop;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;

/**
 * A {@code @DistributedLock} key, parsed and checked once, in the cheapest form that
 * gives the same result as evaluating the SpEL expression per call: a constant (empty key
 * or a quoted literal), one argument as is ({@code #orderId}, {@code #p0}), or a parsed
 * {@link Expression} for everything else. Immutable and shared by all calls of the
 * method. Created by {@link LockKeyResolver#parse}.
 */
public final class LockKeyExpression {

    private final String source;

    private final @Nullable String constantKey;

    private final int argumentIndex;

    private final @Nullable Expression expression;

    private final ParameterNameDiscoverer parameterNames;

    private LockKeyExpression(String source, @Nullable String constantKey, int argumentIndex,
            @Nullable Expression expression, @Nullable String @Nullable [] parameterNames) {
        this.source = source;
        this.constantKey = constantKey;
        this.argumentIndex = argumentIndex;
        this.expression = expression;
        this.parameterNames = new FixedParameterNames(parameterNames);
    }

    static LockKeyExpression constant(String source, String key) {
        return new LockKeyExpression(source, key, -1, null, null);
    }

    static LockKeyExpression argument(String source, int index) {
        return new LockKeyExpression(source, null, index, null, null);
    }

    static LockKeyExpression evaluated(String source, Expression expression,
            @Nullable String @Nullable [] parameterNames) {
        return new LockKeyExpression(source, null, -1, expression, parameterNames);
    }

    /** The key attribute as written in the annotation; empty for the method lock. */
    public String getSource() {
        return source;
    }

    /**
     * The key when it does not depend on the call (empty key, quoted literal), otherwise
     * {@code null}.
     */
    public @Nullable String getConstantKey() {
        return constantKey;
    }

    /**
     * The index of the argument that is the key as is ({@code #orderId}, {@code #p0}),
     * otherwise -1.
     */
    public int getArgumentIndex() {
        return argumentIndex;
    }

    /**
     * The parsed expression when the key must be evaluated per call, otherwise
     * {@code null}.
     */
    public @Nullable Expression getExpression() {
        return expression;
    }

    /**
     * The method's parameter names, looked up once: the per-call evaluation context asks
     * for them on every call that reads a variable, and {@code Method.getParameters()}
     * copies an array each time.
     */
    ParameterNameDiscoverer getParameterNames() {
        return parameterNames;
    }

    @Override
    public String toString() {
        return source;
    }

    /**
     * Answers with the names found at startup, for the one method this key belongs to.
     */
    private static final class FixedParameterNames implements ParameterNameDiscoverer {

        private final @Nullable String @Nullable [] names;

        FixedParameterNames(@Nullable String @Nullable [] names) {
            this.names = names;
        }

        @Override
        public @Nullable String @Nullable [] getParameterNames(Method method) {
            return names;
        }

        @Override
        public @Nullable String @Nullable [] getParameterNames(Constructor<?> ctor) {
            return null;
        }

    }

}
