package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.CachedExpressionEvaluator;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.expression.spel.SpelMessage;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.Indexer;
import org.springframework.expression.spel.ast.InlineMap;
import org.springframework.expression.spel.ast.Literal;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.Projection;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.Selection;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.util.ClassUtils;
import org.springframework.util.ObjectUtils;

import io.github.distlock.InvalidLockKeyException;
import io.github.distlock.LockKeys;

/**
 * Turns the {@code key} of {@link io.github.distlock.DistributedLock @DistributedLock}
 * into a lock name.
 *
 * <p>
 * At startup, {@link #parse} parses the SpEL expression once per method and checks it
 * against the method: every {@code #name} must be a parameter, {@code #p0}/{@code #a0}
 * must be in range, every {@code @bean} must exist, and a bare word (which SpEL reads as
 * a property of the root object, see {@link LockExpressionRootObject}) is rejected
 * because it is nearly always a literal without its quotes. Per call, {@link #resolveKey}
 * then costs almost nothing for the common forms (a constant, or one argument as is) and
 * one {@link MethodBasedEvaluationContext} for the rest, so {@code #paramName},
 * {@code #p0}, {@code #a0}, {@code #order.customer.id} and {@code @bean.method()} all
 * work.
 */
public class LockKeyResolver extends CachedExpressionEvaluator implements BeanFactoryAware {

    /** The bare words that really are properties of {@link LockExpressionRootObject}. */
    private static final Set<String> ROOT_PROPERTIES = Set.of("method", "methodName", "args", "target", "targetClass");

    private static final Pattern INDEXED_ARGUMENT = Pattern.compile("[ap](\\d+)");

    private final Map<ExpressionKey, Expression> expressionCache = new ConcurrentHashMap<>(64);

    private @Nullable BeanFactory beanFactory;

    private @Nullable BeanFactoryResolver beanResolver;

    private int maxKeyLength = LockKeys.DEFAULT_MAX_LENGTH;

    /**
     * Gives expressions access to beans ({@code @tenantContext.currentTenant()}) and lets
     * {@link #parse} check that the beans they name exist.
     */
    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
        // Stateless, so one resolver serves every call.
        this.beanResolver = new BeanFactoryResolver(beanFactory);
    }

    /**
     * Sets the longest key a call may lock ({@code distributed-lock.max-key-length}): a
     * longer literal key fails {@link #parse}, a longer evaluated one fails the call with
     * {@link InvalidLockKeyException}.
     * @param maxKeyLength the longest key, in characters, at least 1
     */
    public void setMaxKeyLength(int maxKeyLength) {
        if (maxKeyLength < 1) {
            throw new IllegalArgumentException("The maximum key length must be at least 1, was " + maxKeyLength
                    + "; set " + LockKeys.MAX_LENGTH_PROPERTY + " to a positive number such as "
                    + LockKeys.DEFAULT_MAX_LENGTH + ".");
        }
        this.maxKeyLength = maxKeyLength;
    }

    /**
     * The longest key a call may lock, {@value LockKeys#DEFAULT_MAX_LENGTH} unless set.
     */
    public int getMaxKeyLength() {
        return maxKeyLength;
    }

    /**
     * Parses and checks a key expression for one method.
     * @param method the method the key is declared on (its parameters are the
     * expression's variables)
     * @param targetClass the bean class the method is called on; names the method lock
     * when the key is empty; {@code null} for the method's declaring class
     * @param source the key attribute as written; empty means the method lock
     * {@code SimpleClassName.method}
     * @return the key in its cheapest evaluable form
     * @throws InvalidLockDefinitionException if the expression does not parse, names
     * something that does not exist, or is a literal longer than the maximum key length
     */
    public LockKeyExpression parse(Method method, @Nullable Class<?> targetClass, String source) {
        Class<?> owner = (targetClass != null ? targetClass : method.getDeclaringClass());
        if (source.isEmpty()) {
            // The user class: the bean may be a CGLIB subclass, whose generated name must
            // not leak into the key.
            return LockKeyExpression.constant(source,
                    ClassUtils.getUserClass(owner).getSimpleName() + "." + method.getName());
        }
        if (source.isBlank()) {
            throw new InvalidLockDefinitionException(method, owner, "key", source, "is blank. Leave the key empty "
                    + "to lock the method itself, or give an expression such as key = \"#id\".", null);
        }
        Expression expression;
        try {
            expression = getExpression(expressionCache, new AnnotatedElementKey(method, owner), source);
        }
        catch (ParseException ex) {
            throw new InvalidLockDefinitionException(method, owner, "key", source,
                    "is not a valid SpEL expression (" + ex.getMessage() + "). " + parseFix(source), ex);
        }
        // Spring 7 declares the names themselves nullable too; the checks below treat a
        // null name as no match.
        @Nullable String[] parameterNames = getParameterNameDiscoverer().getParameterNames(method);
        if (!(expression instanceof SpelExpression spel)) {
            // A custom parser: nothing to check or shortcut.
            return LockKeyExpression.evaluated(source, expression, parameterNames);
        }
        SpelNode ast = spel.getAST();
        new ExpressionCheck(method, owner, source, parameterNames).check(ast, null, true, true);
        if (ast instanceof Literal literal) {
            String constant = toKey(literal.getLiteralValue().getValue());
            if (constant == null || constant.isBlank()) {
                throw new InvalidLockDefinitionException(method, owner, "key", source, "is a blank literal, which "
                        + "cannot name a lock. Give a name such as key = \"'nightly-report'\", or leave the key empty "
                        + "to lock the method itself.", null);
            }
            if (constant.length() > maxKeyLength) {
                throw new InvalidLockDefinitionException(method, owner, "key", source,
                        "is a literal of " + constant.length() + " characters, longer than "
                                + LockKeys.MAX_LENGTH_PROPERTY + " (" + maxKeyLength
                                + "), so every call would fail. Use a shorter name, or raise "
                                + LockKeys.MAX_LENGTH_PROPERTY + ".",
                        null);
            }
            return LockKeyExpression.constant(source, constant);
        }
        if (ast instanceof VariableReference variable) {
            int index = argumentIndex(variableName(variable), parameterNames, method.getParameterCount());
            if (index >= 0) {
                return LockKeyExpression.argument(source, index);
            }
        }
        return LockKeyExpression.evaluated(source, expression, parameterNames);
    }

    /**
     * The lock name for one call.
     * @param operation the method's parsed annotation
     * @param args the call's arguments
     * @param target the target object (not the proxy), or {@code null}
     * @return the key, never blank nor longer than {@link #getMaxKeyLength()}
     * @throws InvalidLockKeyException if the expression evaluates to {@code null}, a
     * blank string or a key longer than {@link #getMaxKeyLength()}
     * @throws IllegalArgumentException if the expression cannot be evaluated (for example
     * a property of a {@code null} argument)
     */
    public String resolveKey(LockOperation operation, @Nullable Object[] args, @Nullable Object target) {
        return resolveKey(operation, operation.getKey(), args, target);
    }

    /**
     * The lock names of one call of a method with several keys ({@code keys}), in
     * declaration order; the caller sorts and de-duplicates them. Each goes through
     * {@link #resolveKey(LockOperation, LockKeyExpression, Object[], Object)}, the one
     * method to override to change every key (the three-argument form serves single keys
     * only).
     * @param operation the method's parsed annotation
     * @param args the call's arguments
     * @param target the target object (not the proxy), or {@code null}
     * @return a new array with one key per expression, none blank nor too long
     * @throws InvalidLockKeyException if an expression evaluates to {@code null}, a blank
     * string or a key longer than {@link #getMaxKeyLength()}
     * @throws IllegalArgumentException if an expression cannot be evaluated
     */
    public String[] resolveKeys(LockOperation operation, @Nullable Object[] args, @Nullable Object target) {
        LockKeyExpression[] expressions = operation.multipleKeys();
        if (expressions == null) {
            return new String[] { resolveKey(operation, args, target) };
        }
        String[] keys = new String[expressions.length];
        for (int i = 0; i < expressions.length; i++) {
            keys[i] = resolveKey(operation, expressions[i], args, target);
        }
        return keys;
    }

    /**
     * The lock name that one of the method's key expressions gives for one call.
     * @param operation the method's parsed annotation
     * @param key one of its parsed keys
     * @param args the call's arguments
     * @param target the target object (not the proxy), or {@code null}
     * @return the key, never blank nor longer than {@link #getMaxKeyLength()}
     * @throws InvalidLockKeyException if the expression evaluates to {@code null}, a
     * blank string or a key longer than {@link #getMaxKeyLength()}
     * @throws IllegalArgumentException if the expression cannot be evaluated (for example
     * a property of a {@code null} argument)
     */
    public String resolveKey(LockOperation operation, LockKeyExpression key, @Nullable Object[] args,
            @Nullable Object target) {
        String constant = key.getConstantKey();
        if (constant != null) {
            return constant;
        }
        Object value;
        int index = key.getArgumentIndex();
        if (index >= 0) {
            value = (index < args.length ? args[index] : null);
        }
        else {
            value = evaluate(operation, key, args, target);
        }
        String resolved = toKey(value);
        if (resolved == null || resolved.isBlank()) {
            throw new InvalidLockKeyException(InvalidLockKeyException.Reason.BLANK, resolved, maxKeyLength,
                    "@DistributedLock key \"" + key.getSource() + "\" of " + operation.describeMethod()
                            + " evaluated to "
                            + (resolved == null ? "null" : "a blank string, " + LockKeys.preview(resolved))
                            + ", which cannot name a lock, so the method was not invoked. "
                            + "Pass a non-blank value, or give " + "the expression a fallback such as key = \""
                            + key.getSource() + " ?: 'none'\"."
                            + (key.getParameterNames().getParameterNames(operation.getMethod()) == null && index < 0
                                    ? " Parameter names are not available: compile with -parameters, or use #p0/#a0."
                                    : ""));
        }
        if (resolved.length() > maxKeyLength) {
            throw LockKeys.tooLong(resolved, maxKeyLength, "@DistributedLock key \"" + key.getSource() + "\" of "
                    + operation.describeMethod() + " evaluated to a key", "The method was not invoked.");
        }
        return resolved;
    }

    private @Nullable Object evaluate(LockOperation operation, LockKeyExpression key, @Nullable Object[] args,
            @Nullable Object target) {
        Method method = operation.getMethod();
        LockExpressionRootObject root = new LockExpressionRootObject(method, args, target, operation.getTargetClass());
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(root, method, args,
                key.getParameterNames());
        if (beanResolver != null) {
            context.setBeanResolver(beanResolver);
        }
        try {
            return key.getExpression().getValue(context);
        }
        catch (EvaluationException ex) {
            if (ex instanceof SpelEvaluationException spel
                    && spel.getMessageCode() == SpelMessage.MAX_CONCATENATED_STRING_LENGTH_EXCEEDED) {
                // A huge argument in 'order:' + #id: SpEL refuses to build it, and it
                // would be too long anyway.
                throw new InvalidLockKeyException(InvalidLockKeyException.Reason.TOO_LONG, null, maxKeyLength,
                        "@DistributedLock key \"" + key.getSource() + "\" of " + operation.describeMethod()
                                + " would build a key longer than SpEL lets a string grow (" + ex.getMessage()
                                + "), far longer than " + LockKeys.MAX_LENGTH_PROPERTY + " (" + maxKeyLength + "). "
                                + "The method was not invoked. Lock on a short identifier of the resource (an id, or "
                                + "a hash of a long value).");
            }
            throw new IllegalArgumentException("Could not evaluate @DistributedLock key \"" + key.getSource() + "\" of "
                    + operation.describeMethod() + ", so the method was not invoked: " + ex.getMessage()
                    + ". For parts that may be null, use the safe navigation operator (#order?.customer?.id) "
                    + "and a fallback (?: 'none').", ex);
        }
    }

    /**
     * The lock name for a value: strings as they are, arrays as {@code {a, b}}, anything
     * else by {@code toString()}; {@code null} stays {@code null}. The argument shortcut
     * and full evaluation share it, so both give the same key for the same argument.
     */
    private static @Nullable String toKey(@Nullable Object value) {
        if (value == null || value instanceof String) {
            return (String) value;
        }
        return ObjectUtils.nullSafeToString(value);
    }

    private static String variableName(VariableReference variable) {
        return variable.toStringAST().substring(1); // "#name"
    }

    /**
     * The argument index that {@code #name} denotes, mirroring how
     * {@link MethodBasedEvaluationContext} defines its variables ({@code a<i>},
     * {@code p<i>}, then the parameter name, for each i in turn, later ones winning), or
     * -1 if it is not an argument.
     */
    private static int argumentIndex(String name, @Nullable String @Nullable [] parameterNames, int parameterCount) {
        int index = -1;
        for (int i = 0; i < parameterCount; i++) {
            if (name.equals("a" + i) || name.equals("p" + i)
                    || (parameterNames != null && name.equals(parameterNames[i]))) {
                index = i;
            }
        }
        return index;
    }

    private static String parseFix(String source) {
        if (source.indexOf('#') < 0 && source.indexOf('@') < 0 && source.indexOf('\'') < 0 && source.indexOf('(') < 0) {
            return "If it is meant as literal text, quote it inside the expression: key = \"'" + source + "'\".";
        }
        return "Fix the syntax; literal text needs single quotes inside the expression, for example "
                + "key = \"'order:' + #orderId\".";
    }

    /**
     * Walks a parsed expression once and reports the first thing that would fail on every
     * call.
     */
    private final class ExpressionCheck {

        private final Method method;

        private final Class<?> owner;

        private final String source;

        private final @Nullable String @Nullable [] parameterNames;

        ExpressionCheck(Method method, Class<?> owner, String source, @Nullable String @Nullable [] parameterNames) {
            this.method = method;
            this.owner = owner;
            this.source = source;
            this.parameterNames = parameterNames;
        }

        /**
         * @param onRoot whether the node is evaluated against the root object (so a
         * property reference there reads a property of {@link LockExpressionRootObject})
         * @param inRootScope whether method and indexer arguments below are evaluated
         * against the root object (not inside a selection or projection, which evaluate
         * against each element)
         */
        void check(SpelNode node, @Nullable SpelNode parent, boolean onRoot, boolean inRootScope) {
            if (node instanceof PropertyOrFieldReference property && onRoot
                    && !ROOT_PROPERTIES.contains(property.getName())) {
                throw bareWord(property, parent);
            }
            if (node instanceof VariableReference variable) {
                checkVariable(variableName(variable));
            }
            if (node instanceof BeanReference bean && beanFactory != null
                    && !beanFactory.containsBean(bean.getName())) {
                throw new InvalidLockDefinitionException(method, owner, "key", source,
                        "refers to @" + bean.getName() + ", but there is no bean named '" + bean.getName()
                                + "'. Fix the bean name or define the bean.",
                        null);
            }
            for (int i = 0; i < node.getChildCount(); i++) {
                SpelNode child = node.getChild(i);
                boolean childOnRoot = onRoot;
                boolean childInRootScope = inRootScope;
                if (node instanceof CompoundExpression) {
                    // a.b.c: only 'a' is read from the root, the rest from the previous
                    // step's value.
                    childOnRoot = onRoot && i == 0;
                }
                else if (node instanceof Selection || node instanceof Projection) {
                    childOnRoot = false;
                    childInRootScope = false;
                }
                else if (node instanceof MethodReference || node instanceof FunctionReference) {
                    childOnRoot = inRootScope;
                }
                else if (node instanceof Indexer) {
                    // #map[key]: SpEL reads an unquoted name in an indexer as a literal
                    // map key.
                    if (child instanceof PropertyOrFieldReference) {
                        continue;
                    }
                    childOnRoot = inRootScope;
                }
                else if (node instanceof InlineMap && i % 2 == 0 && child instanceof PropertyOrFieldReference) {
                    continue; // {name: value}: unquoted map keys are literals
                }
                check(child, node, childOnRoot, childInRootScope);
            }
        }

        private void checkVariable(String name) {
            if (name.equals("root") || name.equals("this")) {
                return;
            }
            int count = method.getParameterCount();
            Matcher indexed = INDEXED_ARGUMENT.matcher(name);
            if (indexed.matches()) {
                if (Integer.parseInt(indexed.group(1)) < count
                        || (parameterNames != null && Arrays.asList(parameterNames).contains(name))) {
                    return;
                }
            }
            else if (parameterNames == null || Arrays.asList(parameterNames).contains(name)) {
                // Without parameter names only #p0/#a0 can be checked; a wrong name then
                // shows as a null key.
                return;
            }
            throw new InvalidLockDefinitionException(method, owner, "key", source,
                    "refers to #" + name + ", which is not a parameter of this method. " + describeParameters(), null);
        }

        private String describeParameters() {
            int count = method.getParameterCount();
            if (count == 0) {
                return "The method has no parameters: use a literal such as key = \"'" + method.getName()
                        + "'\", or leave the key empty to lock the method itself.";
            }
            StringBuilder text = new StringBuilder("Its parameters are: ");
            for (int i = 0; i < count; i++) {
                if (i > 0) {
                    text.append(", ");
                }
                if (parameterNames != null) {
                    text.append('#').append(parameterNames[i]).append(" (or ");
                }
                text.append("#p").append(i).append(", #a").append(i);
                if (parameterNames != null) {
                    text.append(')');
                }
            }
            String example = (parameterNames != null ? parameterNames[0] : "p0");
            return text.append(". Use one of them, for example key = \"#").append(example).append("\".").toString();
        }

        private InvalidLockDefinitionException bareWord(PropertyOrFieldReference property, @Nullable SpelNode parent) {
            String word = property.getName();
            // A dotted run of bare words (order.id) is quoted as a whole: 'order.id'.
            SpelNode quoted = property;
            if (parent instanceof CompoundExpression && parent.getChild(0) == property && allProperties(parent)) {
                quoted = parent;
            }
            int start = quoted.getStartPosition();
            int end = quoted.getEndPosition();
            String literal = source.substring(0, start) + "'" + source.substring(start, end) + "'"
                    + source.substring(end);
            StringBuilder problem = new StringBuilder("reads '").append(word)
                .append("' as a property of the " + "evaluation root, which has none of that name (only ")
                .append(String.join(", ", ROOT_PROPERTIES.stream().sorted().toList()))
                .append("), so every call would fail. SpEL needs single quotes around literal text: key = \"")
                .append(literal)
                .append("\".");
            if (parameterNames != null && Arrays.asList(parameterNames).contains(word)) {
                String variable = source.substring(0, property.getStartPosition()) + "#"
                        + source.substring(property.getStartPosition());
                problem.append(" To use the parameter '")
                    .append(word)
                    .append("', prefix it with #: key = \"")
                    .append(variable)
                    .append("\".");
            }
            return new InvalidLockDefinitionException(method, owner, "key", source, problem.toString(), null);
        }

        private boolean allProperties(SpelNode compound) {
            for (int i = 0; i < compound.getChildCount(); i++) {
                if (!(compound.getChild(i) instanceof PropertyOrFieldReference)) {
                    return false;
                }
            }
            return true;
        }

    }

}
