package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Lazy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.distlock.DistributedLock;
import io.github.distlock.aop.LockTestContexts.LockProbe;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * A {@code @DistributedLock} that no proxy can intercept fails the startup, naming the
 * method, the reason and the fix, unless {@code distributed-lock.unguarded-methods=warn}:
 * a private or static method, or a final method on a class-based (CGLIB) proxy. The same
 * final method behind an interface-based proxy is guarded. A call through {@code this}
 * bypasses the proxy, and a call through a lazily injected reference to the bean does
 * not.
 */
class DistributedLockUnguardedMethodTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private final ListAppender<ILoggingEvent> warnings = new ListAppender<>();

    private final List<Logger> loggers = List.of((Logger) LoggerFactory.getLogger(AnnotationLockOperationSource.class),
            (Logger) LoggerFactory.getLogger(FinalMethodDetector.class));

    @BeforeEach
    void captureWarnings() {
        warnings.start();
        loggers.forEach(logger -> logger.addAppender(warnings));
    }

    @AfterEach
    void stopCapturingWarnings() {
        loggers.forEach(logger -> logger.detachAppender(warnings));
    }

    private ApplicationContextRunner runner() {
        return LockTestContexts.runner(redis.server());
    }

    /**
     * As in an application with spring-boot-starter-aop: proxies are class-based unless
     * configured otherwise.
     */
    private ApplicationContextRunner bootAopRunner() {
        return runner().withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class));
    }

    @Test
    void finalMethodFailsStartupNamingTheMethodAndTheFix() {
        runner().withBean(FinalMethodService.class).run(context -> {
            assertThat(context).hasFailed();
            assertUnguarded(context.getStartupFailure(), "FinalMethodService.place(String orderId)",
                    "the method is final", "bean 'distributedLockUnguardedMethodTest.FinalMethodService'",
                    "class-based (CGLIB) proxy", "without the lock", "Remove final",
                    "spring.aop.proxy-target-class=false", "LockService", "distributed-lock.unguarded-methods=warn");
        });
    }

    @Test
    void finalMethodInheritedFromASuperclassFailsTheStartup() {
        runner().withBean(InheritedFinalMethodService.class).run(context -> {
            assertThat(context).hasFailed();
            assertUnguarded(context.getStartupFailure(), "InheritedFinalMethodService.place(String orderId)",
                    "the method is final");
        });
    }

    @Test
    void finalMethodOfAnInterfaceImplementationFailsTheStartupWhenBootProxiesByClass() {
        bootAopRunner().withBean(OrderPlacement.class, FinalOrderPlacement::new).run(context -> {
            assertThat(context).hasFailed();
            assertUnguarded(context.getStartupFailure(), "FinalOrderPlacement.place(String orderId)",
                    "the method is final", "class-based (CGLIB) proxy");
        });
    }

    @Test
    void finalMethodBehindAnInterfaceBasedProxyIsGuarded() {
        bootAopRunner().withPropertyValues("spring.aop.proxy-target-class=false")
            .withBean(OrderPlacement.class, FinalOrderPlacement::new)
            .run(context -> {
                assertThat(context).hasNotFailed();
                OrderPlacement placement = context.getBean(OrderPlacement.class);
                assertThat(AopUtils.isJdkDynamicProxy(placement)).isTrue();
                FinalOrderPlacement.probe = context.getBean(LockProbe.class);
                assertThat(placement.place("42")).containsExactly("lock:{order:42}");
                assertThat(warnings.list).isEmpty();
            });
    }

    @Test
    void finalMethodIsOnlyAWarningWithUnguardedMethodsWarnAndThenRunsWithoutTheLock() {
        runner().withPropertyValues("distributed-lock.unguarded-methods=warn")
            .withBean(FinalMethodService.class)
            .run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(warnings.list).singleElement()
                    .extracting(ILoggingEvent::getFormattedMessage)
                    .asString()
                    .contains("FinalMethodService.place(String orderId)", "has no effect", "the method is final",
                            "Remove final")
                    .doesNotContain("unguarded-methods=warn");
                FinalMethodService.probe = context.getBean(LockProbe.class);
                // The proxy cannot override the method: it runs, and no lock is held.
                assertThat(context.getBean(FinalMethodService.class).place("42")).isEmpty();
            });
    }

    @Test
    void privateMethodFailsStartupNamingTheMethodAndTheFix() {
        runner().withBean(PrivateMethodService.class).run(context -> {
            assertThat(context).hasFailed();
            assertUnguarded(context.getStartupFailure(), "PrivateMethodService.place(String orderId)",
                    "the method is private", "cannot be proxied", "Make it public",
                    "distributed-lock.unguarded-methods=warn");
        });
    }

    @Test
    void staticMethodFailsStartupSayingThatStaticMethodsCannotBeProxied() {
        runner().withBean(StaticMethodService.class).run(context -> {
            assertThat(context).hasFailed();
            assertUnguarded(context.getStartupFailure(), "StaticMethodService.place(String orderId)",
                    "the method is static", "a static method cannot be proxied", "instance method",
                    "distributed-lock.unguarded-methods=warn");
            assertThat(context.getStartupFailure()).hasStackTraceContaining("static")
                .rootCause()
                .message()
                .doesNotContain("Make the method public");
        });
    }

    @Test
    void staticMethodIsOnlyAWarningWithUnguardedMethodsWarnAndTheWarningDoesNotSayMakeItPublic() {
        runner().withPropertyValues("distributed-lock.unguarded-methods=warn")
            .withBean(StaticMethodService.class)
            .run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(warnings.list).singleElement()
                    .extracting(ILoggingEvent::getFormattedMessage)
                    .asString()
                    .contains("StaticMethodService.place(String orderId)", "has no effect",
                            "a static method cannot be proxied")
                    .doesNotContain("Make the method public");
            });
    }

    @Test
    void callThroughThisRunsWithoutTheLock() {
        runner().withBean(SelfCallingService.class).run(context -> {
            SelfCallingService service = context.getBean(SelfCallingService.class);
            assertThat(service.reserveThroughThis("42")).isEmpty();
        });
    }

    @Test
    void callThroughALazilyInjectedSelfReferenceIsGuarded() {
        runner().withBean(SelfCallingService.class).run(context -> {
            SelfCallingService service = context.getBean(SelfCallingService.class);
            assertThat(service.reserveThroughSelf("42")).containsExactly("lock:{reserve:42}");
        });
    }

    @Test
    void callThroughAnObjectProviderOfTheBeanIsGuarded() {
        runner().withBean(SelfCallingService.class).run(context -> {
            SelfCallingService service = context.getBean(SelfCallingService.class);
            assertThat(service.reserveThroughProvider("42")).containsExactly("lock:{reserve:42}");
        });
    }

    private static void assertUnguarded(Throwable failure, String... fragments) {
        Throwable cause = failure;
        while (cause != null && !(cause instanceof InvalidLockDefinitionException)) {
            cause = cause.getCause();
        }
        assertThat(cause).as("InvalidLockDefinitionException in the cause chain of %s", failure).isNotNull();
        assertThat(cause.getMessage()).contains(fragments);
    }

    static class FinalMethodService {

        /**
         * Static: a final method runs on the proxy instance, whose own fields are never
         * set.
         */
        static volatile LockProbe probe;

        @DistributedLock(key = "'order:' + #orderId")
        public final List<String> place(String orderId) {
            return probe.heldLocks();
        }

    }

    static class FinalMethodBase {

        @DistributedLock(key = "'order:' + #orderId")
        public final void place(String orderId) {
        }

    }

    static class InheritedFinalMethodService extends FinalMethodBase {

    }

    interface OrderPlacement {

        List<String> place(String orderId);

    }

    static class FinalOrderPlacement implements OrderPlacement {

        static volatile LockProbe probe;

        @Override
        @DistributedLock(key = "'order:' + #orderId")
        public final List<String> place(String orderId) {
            return probe.heldLocks();
        }

    }

    static class PrivateMethodService {

        @DistributedLock(key = "'order:' + #orderId")
        private void place(String orderId) {
        }

        public void placeAll(List<String> orderIds) {
            orderIds.forEach(this::place);
        }

    }

    static class StaticMethodService {

        @DistributedLock(key = "'order:' + #orderId")
        public static void place(String orderId) {
        }

    }

    /**
     * The guide's self-call example: {@code self} is this bean's proxy, injected lazily.
     */
    static class SelfCallingService {

        private final LockProbe probe;

        private final SelfCallingService self;

        private final ObjectProvider<SelfCallingService> provider;

        SelfCallingService(LockProbe probe, @Lazy SelfCallingService self,
                ObjectProvider<SelfCallingService> provider) {
            this.probe = probe;
            this.self = self;
            this.provider = provider;
        }

        public List<String> reserveThroughThis(String id) {
            return reserve(id);
        }

        public List<String> reserveThroughSelf(String id) {
            return self.reserve(id);
        }

        public List<String> reserveThroughProvider(String id) {
            return provider.getObject().reserve(id);
        }

        @DistributedLock(key = "'reserve:' + #id")
        public List<String> reserve(String id) {
            return probe.heldLocks();
        }

    }

}
