package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.env.Environment;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.github.distlock.DistributedLock;
import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.LockDurations;
import io.github.distlock.LockFailureHandler;

/**
 * Reads {@link DistributedLock @DistributedLock} from methods (also when declared on an
 * interface or a superclass method), validates it and caches the result per method and
 * target class, like Spring's {@code AnnotationCacheOperationSource}. Durations are
 * parsed with {@link DurationFormatterUtils#detectAndParse(String)} ({@code "30s"},
 * {@code "500ms"}, {@code "PT1M"}) after resolving {@code ${...}} placeholders with the
 * bean factory's embedded value resolver, and checked against {@link LockDurations}, the
 * rules every call applies; a bare number is rejected rather than read as milliseconds.
 * The key, or each of the keys, goes to {@link LockKeyResolver#parse}. A
 * {@code failureHandler} must name a {@link LockFailureHandler} bean, and contradicting
 * attributes ({@code key} with {@code keys}, {@code failureHandler} with any
 * {@code onFailure}, {@code onBusy} or {@code onUnavailable} action) are rejected.
 * {@code onBusy} and {@code onUnavailable} are resolved here, once: the attribute, else
 * {@code onFailure}, else {@link #setDefaultFailureActions the configured default}. A
 * private or static method, which no proxy can intercept, fails too, or only logs a WARN
 * when {@link #setFailOnUnguardedMethods} is off ({@link FinalMethodDetector} handles
 * final methods, which only the proxy can tell about).
 *
 * <p>
 * {@link #isCandidateClass} validates every locked method of a class when the first bean
 * of that class is proxied, so an invalid declaration fails the startup with an
 * {@link InvalidLockDefinitionException}.
 */
public class AnnotationLockOperationSource implements LockOperationSource, BeanFactoryAware, EnvironmentAware {

    private static final Log logger = LogFactory.getLog(AnnotationLockOperationSource.class);

    /**
     * Cached for methods without the annotation, because a ConcurrentHashMap holds no
     * nulls.
     */
    private static final Object NOT_LOCKED = new Object();

    /**
     * Durations the annotation refuses to guess a unit for: {@code "5000"} could be 5000
     * ms or 5000 s.
     */
    private static final Pattern BARE_NUMBER = Pattern.compile("[+-]?\\d+");

    /** How to turn the startup failure into a WARN, appended to the message. */
    static final String WARN_ONLY_HINT = "To only log a warning instead of failing the startup, set "
            + "distributed-lock.unguarded-methods=warn.";

    private static final java.util.regex.Pattern BACKEND_NAME = java.util.regex.Pattern.compile("[a-z][a-z0-9-]*");

    private final LockKeyResolver keyResolver;

    private boolean failOnUnguardedMethods = true;

    /**
     * The ttl of a method that names none, to check its minimum hold against;
     * {@code null}: not known here, the lock service checks it at the call.
     */
    private @Nullable Duration defaultTtl;

    private FailureAction defaultBusyAction = FailureAction.THROW;

    private FailureAction defaultUnavailableAction = FailureAction.THROW;

    private final Map<MethodClassKey, Object> operations = new ConcurrentHashMap<>(256);

    private final Map<Class<?>, Boolean> candidateClasses = new ConcurrentHashMap<>(256);

    private @Nullable ConfigurableBeanFactory beanFactory;

    private @Nullable Environment environment;

    /**
     * @param keyResolver parses and checks the key expressions
     */
    public AnnotationLockOperationSource(LockKeyResolver keyResolver) {
        this.keyResolver = keyResolver;
    }

    /**
     * Whether a {@code @DistributedLock} on a method that no proxy can intercept (private
     * or static) fails the startup, the default, or only logs a WARN
     * ({@code distributed-lock.unguarded-methods}).
     * @param failOnUnguardedMethods {@code true} to fail, {@code false} to warn
     */
    public void setFailOnUnguardedMethods(boolean failOnUnguardedMethods) {
        this.failOnUnguardedMethods = failOnUnguardedMethods;
    }

    /**
     * The ttl that methods without one get ({@code distributed-lock.default-ttl}), so
     * that a {@code minHold} longer than it fails the startup rather than each call. Set
     * before the first method is parsed.
     * @param defaultTtl the default ttl, or {@code null} if unknown
     */
    public void setDefaultTtl(@Nullable Duration defaultTtl) {
        this.defaultTtl = defaultTtl;
    }

    /** Whether an unguarded method fails the startup rather than only logging a WARN. */
    public boolean isFailOnUnguardedMethods() {
        return failOnUnguardedMethods;
    }

    /**
     * What a method does when its lock is busy, or its store unavailable, if neither its
     * {@code onBusy} / {@code onUnavailable} nor its {@code onFailure} says
     * ({@code distributed-lock.on-busy}, {@code distributed-lock.on-unavailable}). Set
     * before the first method is parsed.
     * @param onBusy {@link FailureAction#THROW} (the default) or
     * {@link FailureAction#SKIP}
     * @param onUnavailable {@link FailureAction#THROW} (the default) or
     * {@link FailureAction#SKIP}
     * @throws IllegalArgumentException for {@link FailureAction#DEFAULT} or {@code null},
     * which would decide nothing
     */
    public void setDefaultFailureActions(FailureAction onBusy, FailureAction onUnavailable) {
        this.defaultBusyAction = requireDecided("onBusy", onBusy);
        this.defaultUnavailableAction = requireDecided("onUnavailable", onUnavailable);
    }

    private static FailureAction requireDecided(String attribute, @Nullable FailureAction action) {
        if (action == null || action == FailureAction.DEFAULT) {
            throw new IllegalArgumentException("The default " + attribute + " action must be THROW or SKIP, was "
                    + action + ": DEFAULT would leave the failure undecided.");
        }
        return action;
    }

    /** Supplies the embedded value resolver that resolves {@code ${...}} in durations. */
    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        if (beanFactory instanceof ConfigurableBeanFactory configurable) {
            this.beanFactory = configurable;
        }
    }

    /**
     * Resolves placeholders while the bean factory has no embedded value resolver yet (it
     * gets one only once the regular singletons are created, while a bean that a
     * post-processor needs may be proxied earlier).
     */
    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    /**
     * Whether {@code targetClass} has a locked method; validates all of them on the first
     * call for the class.
     * @throws InvalidLockDefinitionException if any declaration of the class is invalid
     */
    @Override
    public boolean isCandidateClass(Class<?> targetClass) {
        Boolean known = candidateClasses.get(targetClass);
        if (known != null) {
            return known;
        }
        boolean candidate = validateMethodsOf(targetClass);
        candidateClasses.put(targetClass, candidate);
        return candidate;
    }

    /**
     * The parsed lock of a method, computed once per method and target class.
     * @throws InvalidLockDefinitionException if the method's declaration is invalid
     */
    @Override
    public @Nullable LockOperation getLockOperation(Method method, @Nullable Class<?> targetClass) {
        if (method.getDeclaringClass() == Object.class) {
            return null;
        }
        MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
        Object cached = operations.get(cacheKey);
        if (cached != null) {
            return (cached == NOT_LOCKED ? null : (LockOperation) cached);
        }
        // An invalid declaration is not cached: it keeps failing, whoever asks.
        LockOperation operation = computeOperation(method, targetClass);
        operations.put(cacheKey, (operation != null ? operation : NOT_LOCKED));
        return operation;
    }

    /**
     * Parses every locked method of the class, including those inherited or declared on
     * its interfaces, rather than stopping at the first match: Spring's pointcut matching
     * stops there, and the remaining methods would otherwise be validated only on their
     * first call.
     */
    private boolean validateMethodsOf(Class<?> targetClass) {
        if (!AnnotationUtils.isCandidateClass(targetClass, DistributedLock.class)) {
            return false;
        }
        Set<Class<?>> types = new LinkedHashSet<>();
        types.add(ClassUtils.getUserClass(targetClass));
        types.addAll(ClassUtils.getAllInterfacesForClassAsSet(targetClass));
        boolean found = false;
        for (Class<?> type : types) {
            for (Method method : ReflectionUtils.getAllDeclaredMethods(type)) {
                if (!method.isBridge() && method.getDeclaringClass() != Object.class
                        && getLockOperation(method, targetClass) != null) {
                    found = true;
                }
            }
        }
        return found;
    }

    private @Nullable LockOperation computeOperation(Method method, @Nullable Class<?> targetClass) {
        // The implementation's method carries the parameter names and may override the
        // annotation.
        Method specificMethod = AopUtils.getMostSpecificMethod(method, targetClass);
        DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specificMethod, DistributedLock.class);
        if (annotation == null && specificMethod != method) {
            annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
        }
        if (annotation == null) {
            return null;
        }
        if (Modifier.isStatic(specificMethod.getModifiers()) || Modifier.isPrivate(specificMethod.getModifiers())) {
            unguarded(specificMethod, targetClass, unproxiableProblem(specificMethod));
            return null;
        }
        Class<?> owner = ClassUtils
            .getUserClass(targetClass != null ? targetClass : specificMethod.getDeclaringClass());
        LockKeyExpression[] keys = parseKeys(specificMethod, owner, annotation);
        LockKeyExpression key = (keys != null ? keys[0] : keyResolver.parse(specificMethod, owner, annotation.key()));
        Duration ttl = parseDuration(specificMethod, owner, "ttl", annotation.ttl());
        String ttlProblem = (ttl != null ? LockDurations.ttlProblem(ttl) : null);
        if (ttlProblem != null) {
            throw new InvalidLockDefinitionException(specificMethod, owner, "ttl", annotation.ttl(),
                    resolvedNote(annotation.ttl(), ttl) + ttlProblem + " Use a duration from 1ms to 36500d such as "
                            + "ttl = \"30s\", or leave it empty for distributed-lock.default-ttl.",
                    null);
        }
        Duration waitTime = parseDuration(specificMethod, owner, "waitTime", annotation.waitTime());
        String waitTimeProblem = (waitTime != null ? LockDurations.waitTimeProblem(waitTime) : null);
        if (waitTimeProblem != null) {
            throw new InvalidLockDefinitionException(specificMethod, owner, "waitTime", annotation.waitTime(),
                    resolvedNote(annotation.waitTime(), waitTime) + waitTimeProblem + " Use waitTime = \"0s\" to try "
                            + "once, a duration such as waitTime = \"2s\" (at most 36500d), or leave it empty for "
                            + "distributed-lock.default-wait-time.",
                    null);
        }
        Duration minHold = parseDuration(specificMethod, owner, "minHold", annotation.minHold());
        checkMinHold(specificMethod, owner, annotation, minHold, ttl);
        Boolean watchdog = switch (annotation.watchdog()) {
            case DEFAULT -> null;
            case ENABLED -> Boolean.TRUE;
            case DISABLED -> Boolean.FALSE;
        };
        String failureHandler = annotation.failureHandler();
        if (!failureHandler.isEmpty()) {
            checkFailureHandler(specificMethod, owner, annotation);
        }
        String name = annotation.name();
        if (!name.isEmpty() && (name.isBlank() || !name.strip().equals(name))) {
            throw new InvalidLockDefinitionException(specificMethod, owner, "name", name, "The name must not be blank "
                    + "or start or end with whitespace. Use a fixed name such as name = \"invoice-export\", "
                    + "or leave it " + "empty for " + owner.getSimpleName() + "." + specificMethod.getName() + ".",
                    null);
        }
        return new LockOperation(specificMethod, owner, key, keys, ttl, waitTime, watchdog, annotation.onLeaseLost(),
                annotation.onFailure(), resolve(annotation.onBusy(), annotation.onFailure(), defaultBusyAction),
                resolve(annotation.onUnavailable(), annotation.onFailure(), defaultUnavailableAction), failureHandler,
                name)
            .minHold(minHold)
            .backend(parseBackend(specificMethod, owner, annotation.backend()));
    }

    /**
     * A backend's name as {@code NamedLockBackend} allows it, or {@code null} for the
     * default one. Whether a backend of that name is configured is checked once the lock
     * service exists.
     */
    private static @Nullable String parseBackend(Method method, Class<?> owner, String backend) {
        if (backend.isEmpty()) {
            return null;
        }
        if (!BACKEND_NAME.matcher(backend).matches()) {
            throw new InvalidLockDefinitionException(method, owner, "backend", backend,
                    "is not a backend name: names are lower-case letters, digits and dashes, starting with a letter. "
                            + "Use backend = \"redis\", \"redlock\", \"etcd\" or \"zookeeper\" (each when "
                            + "configured) or the name of a NamedLockBackend bean, or leave it empty for "
                            + "distributed-lock.backend.",
                    null);
        }
        return backend;
    }

    /**
     * A minimum hold is not negative, and not longer than the method's ttl (or the
     * default ttl, if known): the lease would run out first.
     */
    private void checkMinHold(Method method, Class<?> owner, DistributedLock annotation, @Nullable Duration minHold,
            @Nullable Duration ttl) {
        if (minHold == null) {
            return;
        }
        if (minHold.isNegative()) {
            throw new InvalidLockDefinitionException(
                    method, owner, "minHold", annotation.minHold(), resolvedNote(annotation.minHold(), minHold)
                            + "is negative. Use a duration such as minHold = " + "\"1m\", or leave it empty for none.",
                    null);
        }
        Duration lease = (ttl != null ? ttl : defaultTtl);
        if (lease != null && minHold.compareTo(lease) > 0) {
            String ttlText = (ttl != null ? "its ttl (" + annotation.ttl() + ")"
                    : "distributed-lock.default-ttl (" + LockDurations.describe(lease) + ")");
            throw new InvalidLockDefinitionException(method, owner, "minHold", annotation.minHold(),
                    resolvedNote(annotation.minHold(), minHold) + "is longer than " + ttlText + ": the lease would run "
                            + "out before the minimum hold ends, and another owner could take the lock. Give a ttl at "
                            + "least as long, such as ttl = \"" + LockDurations.describe(minHold)
                            + "\", or a shorter minHold.",
                    null);
        }
    }

    /**
     * The case's own attribute if set, else {@code onFailure} if set, else the configured
     * default.
     */
    private static FailureAction resolve(FailureAction specific, FailureAction onFailure, FailureAction configured) {
        return (specific != FailureAction.DEFAULT ? specific
                : onFailure != FailureAction.DEFAULT ? onFailure : configured);
    }

    /**
     * The parsed {@code keys}, each checked like {@code key}; {@code null} when the
     * annotation uses {@code key}.
     */
    private LockKeyExpression @Nullable [] parseKeys(Method method, Class<?> owner, DistributedLock annotation) {
        String[] sources = annotation.keys();
        if (sources.length == 0) {
            return null;
        }
        if (!annotation.key().isEmpty()) {
            throw new InvalidLockDefinitionException(method, owner, "key", annotation.key(),
                    "is set together with " + "keys = " + quoted(sources)
                            + ". Use key for one lock or keys for several, not both: remove "
                            + "key, or move it into keys.",
                    null);
        }
        LockKeyExpression[] keys = new LockKeyExpression[sources.length];
        for (int i = 0; i < sources.length; i++) {
            String source = sources[i];
            if (source.isBlank()) {
                // Unlike key, an empty entry cannot mean "lock the method": that would be
                // one more, fixed lock.
                throw new InvalidLockDefinitionException(method, owner, "keys", source, "is blank, but each entry of "
                        + "keys must name a lock, such as \"'account:' + #from\". Remove the entry or give it an "
                        + "expression.", null);
            }
            try {
                keys[i] = keyResolver.parse(method, owner, source);
            }
            catch (InvalidLockDefinitionException ex) {
                throw new InvalidLockDefinitionException(method, owner, "keys", source,
                        "(an entry of keys) " + ex.getProblem(), ex.getCause());
            }
        }
        return keys;
    }

    /**
     * The named failure handler must be a {@link LockFailureHandler} bean, and must not
     * be combined with an {@code onFailure}, {@code onBusy} or {@code onUnavailable}
     * action, which would contradict it.
     */
    private void checkFailureHandler(Method method, Class<?> owner, DistributedLock annotation) {
        String name = annotation.failureHandler();
        String actions = declaredActions(annotation);
        if (!actions.isEmpty()) {
            throw new InvalidLockDefinitionException(method, owner, "failureHandler", name, "is set together with "
                    + actions + ", but the handler decides what a call that cannot get its lock returns, busy or "
                    + "unavailable alike. Remove " + actions + " (the handler may return an empty value itself, and "
                    + "LockFailure.cause() tells a busy lock from an unavailable store), or remove failureHandler.",
                    null);
        }
        if (name.isBlank()) {
            throw new InvalidLockDefinitionException(method, owner, "failureHandler", name,
                    "is blank. Name a " + "LockFailureHandler bean, or remove failureHandler.", null);
        }
        if (!(beanFactory instanceof ConfigurableListableBeanFactory listable)) {
            return; // nothing to check against; the call looks the handler up and fails
                    // there
        }
        // No eager initialisation: this runs while beans are still being created.
        String[] handlers = listable.getBeanNamesForType(LockFailureHandler.class, true, false);
        for (String handler : handlers) {
            if (handler.equals(name) || Arrays.asList(listable.getAliases(handler)).contains(name)) {
                return;
            }
        }
        if (listable.containsBean(name) && listable.isTypeMatch(name, LockFailureHandler.class)) {
            return; // a handler whose type shows only once its factory is initialised
        }
        String problem;
        if (listable.containsBean(name)) {
            Class<?> type = listable.getType(name, false);
            problem = "names a bean that is not a LockFailureHandler" + (type != null ? " but a " + type.getName() : "")
                    + ".";
        }
        else {
            problem = "names no bean.";
        }
        if (handlers.length == 0) {
            problem += " There is no LockFailureHandler bean: declare one named '" + name + "', for example "
                    + "@Bean LockFailureHandler " + name + "() { return failure -> ...; }.";
        }
        else {
            problem += " The LockFailureHandler beans are: " + String.join(", ", handlers) + ". Name one of them, "
                    + "or declare a LockFailureHandler bean named '" + name + "'.";
        }
        throw new InvalidLockDefinitionException(method, owner, "failureHandler", name, problem, null);
    }

    /**
     * {@code onFailure = SKIP, onBusy = THROW}: the failure actions the annotation sets,
     * or an empty string.
     */
    private static String declaredActions(DistributedLock annotation) {
        StringBuilder actions = new StringBuilder();
        appendAction(actions, "onFailure", annotation.onFailure());
        appendAction(actions, "onBusy", annotation.onBusy());
        appendAction(actions, "onUnavailable", annotation.onUnavailable());
        return actions.toString();
    }

    private static void appendAction(StringBuilder actions, String attribute, FailureAction action) {
        if (action != FailureAction.DEFAULT) {
            actions.append(actions.isEmpty() ? "" : ", ").append(attribute).append(" = ").append(action);
        }
    }

    private static String quoted(String[] values) {
        StringBuilder text = new StringBuilder("{");
        for (int i = 0; i < values.length; i++) {
            text.append(i > 0 ? ", " : "").append('"').append(values[i]).append('"');
        }
        return text.append('}').toString();
    }

    /**
     * Empty means "the configured default", which {@code LockService} fills in when it
     * sees {@code null}.
     */
    private @Nullable Duration parseDuration(Method method, Class<?> owner, String attribute, String value) {
        if (value.isEmpty()) {
            return null;
        }
        String resolved = resolvePlaceholders(method, owner, attribute, value);
        if (resolved.isBlank()) {
            return null; // a placeholder with an empty default, ${order.ttl:}, asks for
                         // the configured default
        }
        String text = resolved.trim();
        if (BARE_NUMBER.matcher(text).matches()) {
            throw new InvalidLockDefinitionException(method, owner, attribute, value,
                    (resolved.equals(value) ? "" : "(resolved to \"" + resolved + "\") ")
                            + "is a number without a unit, and the annotation does " + "not guess one. Write "
                            + withUnits(attribute, value, text) + ".",
                    null);
        }
        try {
            return DurationFormatterUtils.detectAndParse(text);
        }
        catch (IllegalArgumentException ex) {
            String example = attribute.equals("ttl") ? "30s" : "2s";
            throw new InvalidLockDefinitionException(method, owner, attribute, value,
                    (resolved.equals(value) ? "" : "(resolved to \"" + resolved + "\") ") + "is not a duration. "
                            + "Use a duration such as " + attribute + " = \"" + example + "\", \"500ms\" or \"PT1M\", "
                            + "or a ${property} placeholder that resolves to one.",
                    ex);
        }
    }

    private String resolvePlaceholders(Method method, Class<?> owner, String attribute, String value) {
        if (!value.contains("${")) {
            return value;
        }
        String resolved = value;
        IllegalArgumentException failure = null;
        try {
            if (beanFactory != null && beanFactory.hasEmbeddedValueResolver()) {
                resolved = beanFactory.resolveEmbeddedValue(value);
            }
            else if (environment != null) {
                resolved = environment.resolveRequiredPlaceholders(value);
            }
        }
        catch (IllegalArgumentException ex) {
            failure = ex;
        }
        // Without a PropertySourcesPlaceholderConfigurer the context's fallback resolver
        // leaves unknown
        // placeholders in place instead of failing, so look for leftovers too.
        if (failure != null || resolved == null || resolved.contains("${")) {
            String example = attribute.equals("ttl") ? "30s" : "2s";
            throw new InvalidLockDefinitionException(method, owner, attribute, value,
                    "has a placeholder that " + "cannot be resolved"
                            + (failure != null ? " (" + failure.getMessage() + ")" : "")
                            + ". Define the property, for example in application.properties, or give a default after a "
                            + "colon: " + attribute + " = \"" + withDefault(value, example) + "\".",
                    failure);
        }
        return resolved;
    }

    /**
     * {@code ${order.ttl}} becomes {@code ${order.ttl:30s}}, for the message's example
     * fix.
     */
    private static String withDefault(String value, String example) {
        int start = value.indexOf("${");
        int end = value.indexOf('}', start);
        if (end < 0 || value.substring(start, end).contains(":")) {
            return "${my.property:" + example + "}";
        }
        return value.substring(0, end) + ":" + example + value.substring(end);
    }

    private static String resolvedNote(String value, @Nullable Duration parsed) {
        return value.contains("${") ? "(resolved to " + LockDurations.describe(parsed) + ") " : "";
    }

    /**
     * {@code 5000} becomes {@code ttl = "5000ms" or ttl = "5s"}; in a placeholder's
     * property, {@code 5000ms or 5s}.
     */
    private static String withUnits(String attribute, String value, String number) {
        long amount;
        try {
            amount = Long.parseLong(number.startsWith("+") ? number.substring(1) : number);
        }
        catch (NumberFormatException ex) {
            amount = 0; // too long for a long: the plain suggestion below still applies
        }
        String inSeconds = (amount != 0 && amount % 1000 == 0 ? (amount / 1000) + "s" : number + "s");
        if (value.contains("${")) {
            return "the property's value with a unit, such as " + number + "ms or " + inSeconds;
        }
        return attribute + " = \"" + number + "ms\" or " + attribute + " = \"" + inSeconds + "\"";
    }

    /**
     * Why a private or static method cannot be locked, and the fix. Spring's proxies
     * (class-based or interface-based) override or implement instance methods; a private
     * method is never called through the proxy, and a static one belongs to no bean.
     */
    private static String unproxiableProblem(Method method) {
        if (Modifier.isStatic(method.getModifiers())) {
            return "the method is static, and a static method cannot be proxied: Spring intercepts only calls of "
                    + "instance methods made through the bean, so every call would run without the lock. Make it "
                    + "an instance method of the bean and call it through the bean (an injected reference), or lock "
                    + "with LockService directly.";
        }
        return "the method is private, and a private method cannot be proxied: Spring intercepts only calls made "
                + "through the bean, and a private method is only ever called from inside its class, so every call "
                + "would run without the lock. Make it public (or protected) and call it through the bean (an "
                + "injected reference, not this), or lock with LockService directly.";
    }

    /**
     * A locked method that no call can reach through the proxy: fails the startup, or
     * only logs a WARN with {@code distributed-lock.unguarded-methods=warn}.
     */
    private void unguarded(Method method, @Nullable Class<?> targetClass, String problem) {
        if (failOnUnguardedMethods) {
            throw new InvalidLockDefinitionException(method, targetClass, problem + " " + WARN_ONLY_HINT);
        }
        logger.warn("@DistributedLock on " + InvalidLockDefinitionException.describe(method, targetClass)
                + " has no effect: " + problem);
    }

}
