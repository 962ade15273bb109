package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.reflect.MethodSignature;
import org.jspecify.annotations.Nullable;

import io.github.distlock.LockService;

/**
 * {@code @DistributedLock} woven into the classes themselves by AspectJ, for
 * {@code distributed-lock.advice-mode=aspectj}: the counterpart of Spring's
 * {@code AnnotationCacheAspect}. Every execution of an annotated method is locked,
 * whoever calls it: also a {@code this.}-call from inside the class and a {@code final}
 * method, which a Spring proxy never sees, and objects that are not Spring beans.
 *
 * <p>
 * AspectJ creates the one instance; the auto-configuration fetches it with
 * {@link org.aspectj.lang.Aspects#aspectOf(Class)} and {@linkplain #configure configures}
 * it with the context's operation source, key resolver and lock service, as a bean, and
 * unconfigures it when that context closes. Until then, and after, a locked method fails
 * rather than running without its lock. There is one aspect per class loader: with
 * several contexts in one JVM (cached test contexts), the one started last serves every
 * woven call.
 *
 * <p>
 * Weave it at load time: the {@code aspectjweaver} agent, and a {@code META-INF/aop.xml}
 * that names this aspect and includes the application's packages. (Compiled by javac, the
 * aspect gets its {@code aspectOf()} from the weaver; ajc with only this jar on its
 * aspect path would not add it.)
 *
 * <p>
 * Matches methods annotated in their own class (not an annotation inherited from an
 * interface, which AspectJ's execution join points do not see). A private or static one
 * is matched too, and then treated as in proxy mode: its call fails with
 * {@link InvalidLockDefinitionException} (or, with
 * {@code distributed-lock.unguarded-methods=warn}, runs unlocked after a WARN), rather
 * than silently running without the lock.
 */
@Aspect
public class AnnotationDistributedLockAspect extends DistributedLockAspectSupport {

    /**
     * Instantiated by AspectJ; {@link #configure} follows once the Spring context has its
     * beans.
     */
    public AnnotationDistributedLockAspect() {
        super();
    }

    /**
     * Makes the aspect lock calls, with the beans of the context that starts now.
     * @param operationSource finds the lock of each method
     * @param keyResolver resolves the key per call
     * @param lockService supplies the lock service on first use
     */
    @Override
    public void configure(LockOperationSource operationSource, LockKeyResolver keyResolver,
            Supplier<LockService> lockService) {
        super.configure(operationSource, keyResolver, lockService);
    }

    /**
     * Locks around one execution of an annotated method.
     * @param joinPoint the execution
     * @return what the method (or the failure strategy) returned
     * @throws Throwable what the method threw, or why its lock could not be had
     */
    @Around("execution(@io.github.distlock.DistributedLock * *(..))")
    public @Nullable Object lock(ProceedingJoinPoint joinPoint) throws Throwable {
        Method method = ((MethodSignature) joinPoint.getSignature()).getMethod();
        // proceed() may be called again, later and on another thread: a Mono or Flux
        // invokes the method on each
        // subscription, once its lock is held.
        return execute(joinPoint::proceed, joinPoint.getTarget(), method, joinPoint.getArgs());
    }

    /**
     * The context that configured the aspect closes: later calls fail instead of using
     * its closed lock service, unless a newer context has configured the aspect since.
     * @param configuredWith the operation source that context configured the aspect with
     * @return whether the aspect was unconfigured
     */
    @Override
    public boolean unconfigure(LockOperationSource configuredWith) {
        return super.unconfigure(configuredWith);
    }

}
