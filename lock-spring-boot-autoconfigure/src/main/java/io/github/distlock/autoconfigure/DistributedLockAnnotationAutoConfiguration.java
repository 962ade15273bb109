package io.github.distlock.autoconfigure;

import java.time.Duration;

import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.LockService;
import io.github.distlock.aop.AnnotationDistributedLockAspect;
import io.github.distlock.aop.AnnotationLockOperationSource;
import io.github.distlock.aop.DistributedLockAspectSupport;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.aop.DistributedLockInterceptor;
import io.github.distlock.aop.FinalMethodDetector;
import io.github.distlock.aop.LockKeyResolver;
import io.github.distlock.aop.LockOperationSource;
import io.github.distlock.autoconfigure.DistributedLockProperties.UnguardedMethods;

/**
 * Auto-configures {@link io.github.distlock.DistributedLock @DistributedLock}: the
 * operation source and the key resolver, and then, as
 * {@code distributed-lock.advice-mode} says (the counterpart of
 * {@code @EnableCaching(mode = ...)}):
 * <ul>
 * <li>{@code proxy}, the default: the interceptor and its advisor, ordered by
 * {@code distributed-lock.aspect-order}, and an auto-proxy creator if none exists, as
 * {@code @EnableCaching} registers one, so the annotation works with or without
 * {@code spring-boot-starter-aop};</li>
 * <li>{@code aspectj}: no advisor and no proxy, but the woven
 * {@link AnnotationDistributedLockAspect}, configured with the context's beans.</li>
 * </ul>
 *
 * <p>
 * It applies whether or not a {@link LockService} was configured, and the startup fails
 * if there are annotated methods but no lock service ({@link LockServiceRequirement}): an
 * annotation that silently did nothing would let every instance run the method at once.
 * Only {@code distributed-lock.enabled=false} runs them without a lock, and says so
 * ({@link DistributedLockDisabledAutoConfiguration}).
 *
 * <p>
 * All beans are infrastructure beans created by static methods: the proxy creator
 * instantiates advisors before ordinary beans, and neither this class nor the lock
 * service should be created that early. Each bean can be replaced by declaring one of the
 * same type.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnClass({ MethodInterceptor.class, AopConfigUtils.class })
@Conditional(OnDistributedLockEnabledCondition.class)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class DistributedLockAnnotationAutoConfiguration {

    /**
     * Parses and validates {@code @DistributedLock} once per method.
     * @param lockKeyResolver parses the key expressions
     * @param environment where {@code unguarded-methods}, {@code on-busy} and
     * {@code on-unavailable} are read from
     * @return the operation source
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    public static LockOperationSource distributedLockOperationSource(LockKeyResolver lockKeyResolver,
            Environment environment) {
        AnnotationLockOperationSource source = new AnnotationLockOperationSource(lockKeyResolver);
        source.setFailOnUnguardedMethods(failOnUnguardedMethods(environment));
        source.setDefaultFailureActions(failureAction(environment, "on-busy"),
                failureAction(environment, "on-unavailable"));
        source.setDefaultTtl(Binder.get(environment)
            .bind(DistributedLockProperties.PREFIX + ".default-ttl", Duration.class)
            .orElse(Duration.ofSeconds(30)));
        return source;
    }

    /**
     * {@code on-busy} / {@code on-unavailable}, bound like {@code unguarded-methods}:
     * this bean is created before the properties bean, which checks the same, so the
     * first of the two to see {@code default} fails the startup.
     */
    private static FailureAction failureAction(Environment environment, String name) {
        FailureAction action = Binder.get(environment)
            .bind(DistributedLockProperties.PREFIX + "." + name, FailureAction.class)
            .orElse(FailureAction.THROW);
        return DistributedLockProperties.requireThrowOrSkip(name, action);
    }

    /**
     * Bound from the Environment, like the aspect order below, so the properties bean is
     * not created early.
     */
    private static boolean failOnUnguardedMethods(Environment environment) {
        UnguardedMethods action = Binder.get(environment)
            .bind(DistributedLockProperties.PREFIX + ".unguarded-methods", UnguardedMethods.class)
            .orElse(UnguardedMethods.FAIL);
        return action == UnguardedMethods.FAIL;
    }

    /**
     * Fails the startup when a {@code @DistributedLock} method exists but there is no
     * {@link LockService} to lock it with, explaining why there is none. Not replaceable:
     * it is what keeps the annotation from doing nothing.
     * @param lockService the lock service the interceptor will use, looked up only once
     * every singleton exists
     * @param beanFactory where the methods are looked for
     * @param environment where the connection settings are read from, to explain a
     * missing lock service
     * @return the check, run once every singleton exists
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static LockServiceRequirement distributedLockServiceRequirement(ObjectProvider<LockService> lockService,
            ConfigurableListableBeanFactory beanFactory, Environment environment) {
        return new LockServiceRequirement(lockService, beanFactory, environment);
    }

    /**
     * Evaluates the key expressions.
     * @param environment where {@code max-key-length} is read from
     * @return the key resolver
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    public static LockKeyResolver lockKeyResolver(Environment environment) {
        LockKeyResolver resolver = new LockKeyResolver();
        Integer maxKeyLength = Binder.get(environment)
            .bind(DistributedLockProperties.PREFIX + ".max-key-length", Integer.class)
            .orElse(null);
        // An invalid value is left to the properties' own check, which fails the startup
        // naming the property.
        if (maxKeyLength != null && maxKeyLength >= 1) {
            resolver.setMaxKeyLength(maxKeyLength);
        }
        return resolver;
    }

    /**
     * Bound from the Environment for the same reason as the aspect order: the properties
     * bean must not be created while the proxy infrastructure is.
     */
    static void applyCallSettings(DistributedLockAspectSupport support, Environment environment) {
        DistributedLockProperties defaults = new DistributedLockProperties();
        Binder binder = Binder.get(environment);
        support
            .setThrowOnLeaseLost(binder.bind(DistributedLockProperties.PREFIX + ".throw-on-lease-lost", Boolean.class)
                .orElse(defaults.isThrowOnLeaseLost()));
        support.setDefaultWaitTime(binder.bind(DistributedLockProperties.PREFIX + ".default-wait-time", Duration.class)
            .orElse(defaults.getDefaultWaitTime()));
    }

    /**
     * {@code distributed-lock.advice-mode=proxy}, the default: a Spring AOP proxy locks
     * the calls made through each bean.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = DistributedLockProperties.PREFIX, name = "advice-mode", havingValue = "proxy",
            matchIfMissing = true)
    @Import(AutoProxyCreatorRegistrar.class)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static class ProxyModeConfiguration {

        /**
         * Fails the startup on (or warns about) a {@code @DistributedLock} method that is
         * final on a class-based proxy, which would run without the lock. A bean
         * post-processor: it must see each bean after it was proxied.
         * @param distributedLockOperationSource decides which methods are locked
         * @param environment where {@code unguarded-methods} is read from
         * @return the detector
         */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @ConditionalOnMissingBean
        public static FinalMethodDetector distributedLockFinalMethodDetector(
                LockOperationSource distributedLockOperationSource, Environment environment) {
            return new FinalMethodDetector(distributedLockOperationSource, failOnUnguardedMethods(environment));
        }

        /**
         * Locks around each call of an annotated method.
         * @param distributedLockOperationSource finds each method's lock
         * @param lockKeyResolver resolves the key per call
         * @param lockService looked up on the first call, not while the proxy
         * infrastructure is created
         * @param environment where {@code throw-on-lease-lost} and
         * {@code default-wait-time} are read from
         * @return the interceptor
         */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @ConditionalOnMissingBean
        public static DistributedLockInterceptor distributedLockInterceptor(
                LockOperationSource distributedLockOperationSource, LockKeyResolver lockKeyResolver,
                ObjectProvider<LockService> lockService, Environment environment) {
            DistributedLockInterceptor interceptor = new DistributedLockInterceptor(distributedLockOperationSource,
                    lockKeyResolver, lockService::getObject);
            applyCallSettings(interceptor, environment);
            return interceptor;
        }

        /**
         * Applies the interceptor to annotated methods, ordered by
         * {@code distributed-lock.aspect-order}.
         * @param distributedLockOperationSource decides which methods are locked
         * @param distributedLockInterceptor the advice
         * @param environment where the aspect order is read from
         * @return the advisor
         */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @ConditionalOnMissingBean
        public static DistributedLockAdvisor distributedLockAdvisor(LockOperationSource distributedLockOperationSource,
                DistributedLockInterceptor distributedLockInterceptor, Environment environment) {
            // The one property (DistributedLockProperties.aspectOrder) is bound from the
            // Environment rather than
            // injected: the properties bean would otherwise be created while the proxy
            // creator collects advisors,
            // too early to be post-processed like ordinary beans.
            int order = Binder.get(environment)
                .bind(DistributedLockProperties.PREFIX + ".aspect-order", Integer.class)
                .orElse(DistributedLockProperties.DEFAULT_ASPECT_ORDER);
            return new DistributedLockAdvisor(distributedLockOperationSource, distributedLockInterceptor, order);
        }

    }

    /**
     * {@code distributed-lock.advice-mode=aspectj}: the aspect woven into the classes
     * locks every execution of an annotated method, including {@code this.}-calls and
     * final methods; no proxy is made for the lock.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = DistributedLockProperties.PREFIX, name = "advice-mode", havingValue = "aspectj")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static class AspectJModeConfiguration {

        /**
         * The aspect instance AspectJ created when it wove the classes, configured with
         * this context's beans, like Spring's {@code AnnotationCacheAspect.aspectOf()}
         * bean.
         * @param distributedLockOperationSource finds each method's lock
         * @param lockKeyResolver resolves the key per call
         * @param lockService looked up on the first call
         * @param environment where {@code throw-on-lease-lost} and
         * {@code default-wait-time} are read from
         * @return the configured aspect
         * @throws IllegalStateException if AspectJ is not on the classpath or the aspect
         * was not woven
         */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @ConditionalOnMissingBean
        public static AnnotationDistributedLockAspect distributedLockAspect(
                LockOperationSource distributedLockOperationSource, LockKeyResolver lockKeyResolver,
                ObjectProvider<LockService> lockService, Environment environment) {
            AnnotationDistributedLockAspect aspect = WovenAspect.instance();
            applyCallSettings(aspect, environment);
            aspect.configure(distributedLockOperationSource, lockKeyResolver, lockService::getObject);
            return aspect;
        }

        /**
         * Unconfigures the aspect when this context closes (the aspect outlives it:
         * AspectJ owns it), unless a newer context configured it since.
         * @param distributedLockAspect the configured aspect
         * @param distributedLockOperationSource the operation source this context
         * configured it with
         * @return the hook that the context runs on close
         */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        public static DisposableBean distributedLockAspectRelease(AnnotationDistributedLockAspect distributedLockAspect,
                LockOperationSource distributedLockOperationSource) {
            return () -> distributedLockAspect.unconfigure(distributedLockOperationSource);
        }

    }

    /**
     * Touches AspectJ's runtime only in aspectj mode, where it must be on the classpath
     * anyway.
     */
    static final class WovenAspect {

        private static final String HOW_TO_WEAVE = " Weave it at load time: start the JVM with "
                + "-javaagent:/path/to/aspectjweaver.jar, and list "
                + "io.github.distlock.aop.AnnotationDistributedLockAspect under <aspects> in a META-INF/aop.xml "
                + "that includes your packages (see the guide, \"Proxy or AspectJ mode\"). Or set "
                + "distributed-lock.advice-mode=proxy.";

        private WovenAspect() {
        }

        static AnnotationDistributedLockAspect instance() {
            try {
                Class.forName("org.aspectj.lang.Aspects", false, WovenAspect.class.getClassLoader());
            }
            catch (ClassNotFoundException | LinkageError ex) {
                throw new IllegalStateException("distributed-lock.advice-mode=aspectj needs AspectJ on the "
                        + "classpath: add org.aspectj:aspectjweaver (spring-boot-starter-aop brings it)."
                        + HOW_TO_WEAVE, ex);
            }
            try {
                return org.aspectj.lang.Aspects.aspectOf(AnnotationDistributedLockAspect.class);
            }
            catch (org.aspectj.lang.NoAspectBoundException ex) {
                throw new IllegalStateException("distributed-lock.advice-mode=aspectj, but AspectJ did not weave "
                        + "AnnotationDistributedLockAspect, so no @DistributedLock method would be locked."
                        + HOW_TO_WEAVE, ex);
            }
        }

    }

    /**
     * Registers Spring's infrastructure auto-proxy creator unless one exists; an existing
     * one (such as the AspectJ-aware creator of {@code spring-boot-starter-aop}) is kept,
     * and it also applies our advisor.
     */
    static class AutoProxyCreatorRegistrar implements ImportBeanDefinitionRegistrar {

        @Override
        public void registerBeanDefinitions(AnnotationMetadata importingClassMetadata,
                BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
        }

    }

}
