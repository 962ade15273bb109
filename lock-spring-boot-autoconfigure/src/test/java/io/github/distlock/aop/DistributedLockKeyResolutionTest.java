package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.DistributedLock;
import io.github.distlock.aop.LockTestContexts.LockProbe;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * Every supported form of the {@code key} expression ends up as the expected Redis key
 * while the method runs, and the key is gone once it returns.
 */
class DistributedLockKeyResolutionTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private ApplicationContextRunner runner() {
        return LockTestContexts.runner(redis.server())
            .withBean("tenantContext", TenantContext.class, TenantContext::new)
            .withBean(SeenLocks.class)
            .withBean(KeyedService.class)
            .withBean(GreeterImpl.class);
    }

    @Test
    void parameterNameReferenceLocksOnTheArgument() {
        runner().run(context -> {
            KeyedService service = context.getBean(KeyedService.class);
            service.byParameterName("order-42");
            assertThat(context.getBean(SeenLocks.class).locks).containsExactly("lock:{order-42}");
            assertThat(redis.server().command("EXISTS", "lock:{order-42}")).isEqualTo(0L);
        });
    }

    @Test
    void p0ReferenceLocksOnTheFirstArgument() {
        runner().run(context -> {
            KeyedService service = context.getBean(KeyedService.class);
            service.byP0("sku-7");
            assertThat(context.getBean(SeenLocks.class).locks).containsExactly("lock:{sku-7}");
        });
    }

    @Test
    void a0ReferenceLocksOnTheFirstArgumentConvertedToText() {
        runner().run(context -> {
            KeyedService service = context.getBean(KeyedService.class);
            service.byA0(42L);
            assertThat(context.getBean(SeenLocks.class).locks).containsExactly("lock:{42}");
        });
    }

    @Test
    void referenceToALaterParameterLocksOnThatArgument() {
        runner().run(context -> {
            KeyedService service = context.getBean(KeyedService.class);
            service.bySecondParameter("first", "second");
            assertThat(context.getBean(SeenLocks.class).locks).containsExactly("lock:{second}");
        });
    }

    @Test
    void nestedPropertyPathLocksOnTheNestedValue() {
        runner().run(context -> {
            KeyedService service = context.getBean(KeyedService.class);
            service.byNestedProperty(new Order(new Customer("customer-9")));
            assertThat(context.getBean(SeenLocks.class).locks).containsExactly("lock:{customer-9}");
        });
    }

    @Test
    void beanReferenceIsResolvedFromTheApplicationContext() {
        runner().run(context -> {
            KeyedService service = context.getBean(KeyedService.class);
            service.byBeanReference(7);
            assertThat(context.getBean(SeenLocks.class).locks).containsExactly("lock:{acme:7}");
        });
    }

    @Test
    void concatenationWithAQuotedLiteralLocksOnTheCombinedText() {
        runner().run(context -> {
            KeyedService service = context.getBean(KeyedService.class);
            service.byConcatenation("A1");
            assertThat(context.getBean(SeenLocks.class).locks).containsExactly("lock:{stock:A1}");
        });
    }

    @Test
    void quotedLiteralLocksOnTheLiteral() {
        runner().run(context -> {
            KeyedService service = context.getBean(KeyedService.class);
            service.byLiteral();
            assertThat(context.getBean(SeenLocks.class).locks).containsExactly("lock:{nightly-report}");
        });
    }

    @Test
    void rootObjectPropertyMayBeUsedAsABareWord() {
        runner().run(context -> {
            KeyedService service = context.getBean(KeyedService.class);
            service.byRootProperty("x");
            assertThat(context.getBean(SeenLocks.class).locks).containsExactly("lock:{byRootProperty:x}");
        });
    }

    @Test
    void emptyKeyLocksTheMethodUnderSimpleClassNameDotMethodName() {
        runner().run(context -> {
            KeyedService service = context.getBean(KeyedService.class);
            assertThat(AopUtils.isCglibProxy(service)).isTrue(); // the name must not be
                                                                 // the proxy's class
            service.methodLock();
            assertThat(context.getBean(SeenLocks.class).locks).containsExactly("lock:{KeyedService.methodLock}");
            assertThat(redis.server().command("EXISTS", "lock:{KeyedService.methodLock}")).isEqualTo(0L);
        });
    }

    @Test
    void annotationOnAnInterfaceMethodLocksWhenCalledThroughAnInterfaceProxy() {
        runner().run(context -> {
            Greeter greeter = context.getBean(Greeter.class);
            assertThat(AopUtils.isJdkDynamicProxy(greeter)).isTrue();
            assertThat(greeter.greet("ada")).isEqualTo("hello ada");
            assertThat(context.getBean(SeenLocks.class).locks).containsExactly("lock:{greet:ada}");
        });
    }

    /**
     * What the guarded methods saw in Redis; a bean of its own, since fields of a CGLIB
     * proxy stay empty.
     */
    static class SeenLocks {

        volatile List<String> locks;

    }

    record Customer(String id) {
    }

    record Order(Customer customer) {
    }

    static class TenantContext {

        public String current() {
            return "acme";
        }

    }

    static class KeyedService {

        private final LockProbe probe;

        private final SeenLocks seen;

        KeyedService(LockProbe probe, SeenLocks seen) {
            this.probe = probe;
            this.seen = seen;
        }

        @DistributedLock(key = "#orderId")
        public void byParameterName(String orderId) {
            seen.locks = probe.heldLocks();
        }

        @DistributedLock(key = "#p0")
        public void byP0(String sku) {
            seen.locks = probe.heldLocks();
        }

        @DistributedLock(key = "#a0")
        public void byA0(long id) {
            seen.locks = probe.heldLocks();
        }

        @DistributedLock(key = "#second")
        public void bySecondParameter(String first, String second) {
            seen.locks = probe.heldLocks();
        }

        @DistributedLock(key = "#order.customer.id")
        public void byNestedProperty(Order order) {
            seen.locks = probe.heldLocks();
        }

        @DistributedLock(key = "@tenantContext.current() + ':' + #id")
        public void byBeanReference(int id) {
            seen.locks = probe.heldLocks();
        }

        @DistributedLock(key = "'stock:' + #sku")
        public void byConcatenation(String sku) {
            seen.locks = probe.heldLocks();
        }

        @DistributedLock(key = "'nightly-report'")
        public void byLiteral() {
            seen.locks = probe.heldLocks();
        }

        @DistributedLock(key = "methodName + ':' + #p0")
        public void byRootProperty(String suffix) {
            seen.locks = probe.heldLocks();
        }

        @DistributedLock
        public void methodLock() {
            seen.locks = probe.heldLocks();
        }

    }

    interface Greeter {

        @DistributedLock(key = "'greet:' + #name")
        String greet(String name);

    }

    static class GreeterImpl implements Greeter {

        private final LockProbe probe;

        private final SeenLocks seen;

        GreeterImpl(LockProbe probe, SeenLocks seen) {
            this.probe = probe;
            this.seen = seen;
        }

        @Override
        public String greet(String name) {
            seen.locks = probe.heldLocks();
            return "hello " + name;
        }

    }

}
