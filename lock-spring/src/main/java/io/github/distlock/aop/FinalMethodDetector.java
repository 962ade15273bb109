package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.aopalliance.aop.Advice;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.SmartInstantiationAwareBeanPostProcessor;
import org.springframework.util.ReflectionUtils;

/**
 * Finds {@code @DistributedLock} methods that are {@code final} on a bean proxied by
 * class (CGLIB). Such a proxy cannot override a final method, so every call, whatever the
 * reference's type, runs the method without the lock (and on the proxy instance, whose
 * fields are not the target's). Fails the startup, or only logs a WARN with
 * {@code distributed-lock.unguarded-methods=warn}.
 *
 * <p>
 * Only the proxy tells: the same final method is guarded behind an interface-based (JDK)
 * proxy, whose interface method the interceptor handles whatever the implementation's
 * modifiers. So this looks at each bean after the auto-proxy creator has wrapped it,
 * rather than at the class; it runs after the proxy creator because it is not ordered,
 * and it also looks at early references, which is where a bean in a circular reference
 * gets its proxy.
 */
public class FinalMethodDetector implements SmartInstantiationAwareBeanPostProcessor {

    private static final Log logger = LogFactory.getLog(FinalMethodDetector.class);

    private final LockOperationSource operationSource;

    private final boolean failOnUnguardedMethods;

    /**
     * Classes already looked at, so that a WARN is logged once per class, not once per
     * bean.
     */
    private final Map<Class<?>, Boolean> checkedClasses = new ConcurrentHashMap<>();

    /**
     * @param operationSource decides which methods are locked
     * @param failOnUnguardedMethods {@code true} to fail the startup, {@code false} to
     * log a WARN
     */
    public FinalMethodDetector(LockOperationSource operationSource, boolean failOnUnguardedMethods) {
        this.operationSource = operationSource;
        this.failOnUnguardedMethods = failOnUnguardedMethods;
    }

    /** Checks a bean whose proxy is created early, for a circular reference. */
    @Override
    public Object getEarlyBeanReference(Object bean, String beanName) {
        check(bean, beanName);
        return bean;
    }

    /** Checks the bean as the proxy creator left it. */
    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        check(bean, beanName);
        return bean;
    }

    private void check(Object bean, String beanName) {
        if (!AopUtils.isCglibProxy(bean) || !(bean instanceof Advised advised) || !isLocked(advised)) {
            return;
        }
        Class<?> targetClass = AopProxyUtils.ultimateTargetClass(bean);
        if (checkedClasses.containsKey(targetClass)) {
            return;
        }
        for (Method method : ReflectionUtils.getUniqueDeclaredMethods(targetClass, FinalMethodDetector::isFinal)) {
            if (operationSource.getLockOperation(method, targetClass) != null) {
                String problem = problem(beanName);
                if (failOnUnguardedMethods) {
                    throw new InvalidLockDefinitionException(method, targetClass,
                            problem + " " + AnnotationLockOperationSource.WARN_ONLY_HINT);
                }
                logger.warn("@DistributedLock on " + InvalidLockDefinitionException.describe(method, targetClass)
                        + " has no effect: " + problem);
            }
        }
        checkedClasses.put(targetClass, Boolean.TRUE);
    }

    /**
     * Whether the lock interceptor is among the proxy's advice: only then is a locked
     * method ours to check.
     */
    private static boolean isLocked(Advised advised) {
        for (Advisor advisor : advised.getAdvisors()) {
            Advice advice = advisor.getAdvice();
            if (advisor instanceof DistributedLockAdvisor || advice instanceof DistributedLockInterceptor) {
                return true;
            }
        }
        return false;
    }

    /**
     * Final instance methods a caller could reach: private and static ones are reported
     * by the operation source.
     */
    private static boolean isFinal(Method method) {
        int modifiers = method.getModifiers();
        return Modifier.isFinal(modifiers) && !Modifier.isStatic(modifiers) && !Modifier.isPrivate(modifiers)
                && method.getDeclaringClass() != Object.class && !method.isBridge();
    }

    private static String problem(String beanName) {
        return "the method is final, and bean '" + beanName + "' is a class-based (CGLIB) proxy, which cannot "
                + "override a final method, so every call would run the method without the lock. Remove final from "
                + "the method; or declare the method in an interface the bean implements and proxy by interface "
                + "(spring.aop.proxy-target-class=false, and inject the interface); or lock with LockService "
                + "directly.";
    }

}
