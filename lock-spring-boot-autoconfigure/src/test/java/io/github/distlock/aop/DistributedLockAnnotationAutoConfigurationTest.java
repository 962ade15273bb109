package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import org.springframework.aop.aspectj.annotation.AnnotationAwareAspectJAutoProxyCreator;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.autoproxy.InfrastructureAdvisorAutoProxyCreator;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.distlock.DistributedLock;
import io.github.distlock.LockService;
import io.github.distlock.aop.LockTestContexts.LockProbe;
import io.github.distlock.autoconfigure.DistributedLockAnnotationAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockProperties;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * When {@link DistributedLockAnnotationAutoConfiguration} applies, what it registers, and
 * how users replace it.
 */
class DistributedLockAnnotationAutoConfigurationTest {

    /**
     * Only the test that calls a method connects; the others merely need a valid address.
     */
    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private ApplicationContextRunner runner() {
        return LockTestContexts.runner(redis.server()).withBean(LockedService.class);
    }

    @Test
    void registersTheInterceptorInfrastructureAndProxiesAnnotatedBeans() {
        runner().run(context -> {
            assertThat(context).hasSingleBean(AnnotationLockOperationSource.class)
                .hasSingleBean(LockKeyResolver.class)
                .hasSingleBean(DistributedLockInterceptor.class)
                .hasSingleBean(DistributedLockAdvisor.class)
                .hasBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME);
            assertThat(context.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME))
                .isInstanceOf(InfrastructureAdvisorAutoProxyCreator.class);
            assertThat(AopUtils.isAopProxy(context.getBean(LockedService.class))).isTrue();
            assertThat(context.getBean(DistributedLockAdvisor.class).getOrder())
                .isEqualTo(DistributedLockProperties.DEFAULT_ASPECT_ORDER);
        });
    }

    @Test
    void infrastructureBeansHaveTheInfrastructureRole() {
        runner().run(context -> {
            for (String name : List.of("distributedLockOperationSource", "lockKeyResolver",
                    "distributedLockInterceptor", "distributedLockAdvisor", "distributedLockFinalMethodDetector")) {
                assertThat(context.getBeanFactory().getBeanDefinition(name).getRole()).as(name)
                    .isEqualTo(BeanDefinition.ROLE_INFRASTRUCTURE);
            }
        });
    }

    @Test
    void advisorOrderFollowsTheAspectOrderProperty() {
        runner().withPropertyValues("distributed-lock.aspect-order=42")
            .run(context -> assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(42));
    }

    @Test
    void interceptorThrowsOnALostLeaseUnlessThePropertyTurnsItOff() {
        runner().run(
                context -> assertThat(context.getBean(DistributedLockInterceptor.class).isThrowOnLeaseLost()).isTrue());
        runner().withPropertyValues("distributed-lock.throw-on-lease-lost=false")
            .run(context -> assertThat(context.getBean(DistributedLockInterceptor.class).isThrowOnLeaseLost())
                .isFalse());
    }

    @Test
    void annotatedMethodsAreLockedWithTheAspectJProxyCreatorOfSpringBootStarterAop() {
        runner().withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class)).run(context -> {
            assertThat(context.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME))
                .isInstanceOf(AnnotationAwareAspectJAutoProxyCreator.class);
            assertThat(context.getBean(LockedService.class).heldLocks()).containsExactly("lock:{locked}");
        });
    }

    @Test
    void annotatedMethodsAreLockedWithTheProxyCreatorRegisteredHere() {
        runner().run(context -> assertThat(context.getBean(LockedService.class).heldLocks())
            .containsExactly("lock:{locked}"));
    }

    @Test
    void adviceModeProxyIsTheDefaultAndCanBeNamed() {
        runner().withPropertyValues("distributed-lock.advice-mode=proxy").run(context -> {
            assertThat(context).hasSingleBean(DistributedLockAdvisor.class)
                .hasSingleBean(FinalMethodDetector.class)
                .doesNotHaveBean(AnnotationDistributedLockAspect.class);
            assertThat(AopUtils.isAopProxy(context.getBean(LockedService.class))).isTrue();
        });
    }

    @Test
    void anUnknownAdviceModeFailsTheStartupNamingTheProperty() {
        runner().withPropertyValues("distributed-lock.advice-mode=weave").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("distributed-lock.advice-mode");
        });
    }

    @Test
    void adviceModeAspectjWithoutWeavingFailsTheStartupAndSaysHowToWeave() {
        // No weaving agent runs in this module's tests, so the aspect was never woven.
        runner().withPropertyValues("distributed-lock.advice-mode=aspectj").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("distributed-lock.advice-mode=aspectj")
                .hasStackTraceContaining("did not weave")
                .hasStackTraceContaining("-javaagent:")
                .hasStackTraceContaining("META-INF/aop.xml")
                .hasStackTraceContaining("distributed-lock.advice-mode=proxy");
        });
    }

    @Test
    void backsOffWhenDisabled() {
        runner().withPropertyValues("distributed-lock.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(DistributedLockAdvisor.class)
                .doesNotHaveBean(DistributedLockInterceptor.class)
                .doesNotHaveBean(LockOperationSource.class);
            assertThat(AopUtils.isAopProxy(context.getBean(LockedService.class))).isFalse();
        });
    }

    @Test
    void failsTheStartupRatherThanLeaveAnnotatedMethodsUnguardedWithoutALockService() {
        // It used to back off here, and every @DistributedLock method ran without a lock.
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                    DistributedLockAnnotationAutoConfiguration.class))
            .withBean(LockedService.class, () -> new LockedService(null))
            .run(context -> assertThat(context).hasFailed()
                .getFailure()
                .hasMessageContaining("would run without a lock, because there is no LockService")
                .hasMessageContaining(LockedService.class.getName() + ".heldLocks()"));
    }

    @Test
    void backsOffWithoutSpringAop() {
        runner().withClassLoader(new FilteredClassLoader(MethodInterceptor.class, AopConfigUtils.class))
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(DistributedLockAdvisor.class)
                .doesNotHaveBean(LockOperationSource.class));
    }

    @Test
    void userDefinedKeyResolverReplacesOursAndIsUsed() {
        runner().withUserConfiguration(TenantKeyResolverConfiguration.class).run(context -> {
            assertThat(context).hasSingleBean(LockKeyResolver.class);
            assertThat(context.getBean(LockKeyResolver.class)).isInstanceOf(TenantKeyResolver.class);
            assertThat(context.getBean(LockedService.class).heldLocks()).containsExactly("lock:{tenant-a:locked}");
        });
    }

    @Test
    void userDefinedOperationSourceReplacesOurs() {
        runner().withUserConfiguration(OperationSourceConfiguration.class).run(context -> {
            assertThat(context).hasSingleBean(LockOperationSource.class);
            assertThat(context.getBean(LockOperationSource.class))
                .isSameAs(context.getBean(OperationSourceConfiguration.class).source);
        });
    }

    @Test
    void userDefinedInterceptorAndAdvisorReplaceOurs() {
        runner().withUserConfiguration(AdvisorConfiguration.class).run(context -> {
            assertThat(context).hasSingleBean(DistributedLockInterceptor.class)
                .hasSingleBean(DistributedLockAdvisor.class);
            assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(7);
            assertThat(context.getBean(DistributedLockInterceptor.class)).isInstanceOf(CustomInterceptor.class);
        });
    }

    @Test
    void proxyInfrastructureCreatesNeitherTheLockServiceNorOtherBeansEarly() {
        Logger checker = (Logger) LoggerFactory.getLogger(
                "org.springframework.context.support.PostProcessorRegistrationDelegate$BeanPostProcessorChecker");
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        Level previous = checker.getLevel();
        checker.setLevel(Level.DEBUG);
        checker.addAppender(events);
        try {
            // A post-processor without an order is created after the proxy creator, so
            // the advisors and whatever
            // they depend on are created while it is: the moment eager dependencies would
            // show.
            runner().withBean(PlainPostProcessor.class).run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(events.list).extracting(ILoggingEvent::getFormattedMessage).isEmpty();
            });
        }
        finally {
            checker.detachAppender(events);
            checker.setLevel(previous);
        }
    }

    static class LockedService {

        private final LockProbe probe;

        LockedService(LockProbe probe) {
            this.probe = probe;
        }

        @DistributedLock(key = "'locked'")
        public List<String> heldLocks() {
            return probe.heldLocks();
        }

    }

    static class TenantKeyResolver extends LockKeyResolver {

        @Override
        public String resolveKey(LockOperation operation, Object[] args, Object target) {
            return "tenant-a:" + super.resolveKey(operation, args, target);
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class TenantKeyResolverConfiguration {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static LockKeyResolver tenantKeyResolver() {
            return new TenantKeyResolver();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class OperationSourceConfiguration {

        final LockOperationSource source = new AnnotationLockOperationSource(new LockKeyResolver());

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        LockOperationSource customOperationSource() {
            return source;
        }

    }

    static class CustomInterceptor extends DistributedLockInterceptor {

        CustomInterceptor(LockOperationSource source, LockKeyResolver resolver, LockService lockService) {
            super(source, resolver, () -> lockService);
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class AdvisorConfiguration {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static DistributedLockInterceptor customInterceptor(LockOperationSource source, LockKeyResolver resolver) {
            return new CustomInterceptor(source, resolver, null);
        }

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static DistributedLockAdvisor customAdvisor(LockOperationSource source,
                DistributedLockInterceptor interceptor) {
            return new DistributedLockAdvisor(source, interceptor, 7);
        }

    }

    static class PlainPostProcessor implements BeanPostProcessor {

    }

}
