package io.github.distlock.aspectj;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.aspectj.lang.Aspects;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.ClassUtils;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.aop.AnnotationDistributedLockAspect;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.aop.FinalMethodDetector;
import io.github.distlock.aop.InvalidLockDefinitionException;
import io.github.distlock.aspectj.proxied.ProxiedOrderService;
import io.github.distlock.aspectj.woven.WovenOrderService;
import io.github.distlock.autoconfigure.DistributedLockAnnotationAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * {@code distributed-lock.advice-mode=aspectj} with the aspect really woven (the
 * aspectjweaver agent, see the pom and {@code META-INF/aop.xml}) against a real
 * redis-server: a {@code this.}-call and a final method are locked, across threads, with
 * the lock key in Redis while the method runs. The same two calls in proxy mode run
 * unguarded, which shows the tests would notice an aspect that does nothing.
 *
 * <p>
 * Each scenario: a first caller enters the method and stays inside; while it is there,
 * the test looks for the key in Redis and makes a second call from another thread.
 * Locked, the second call cannot have the lock ({@code waitTime = "0s"}) and fails with
 * {@link LockTimeoutException} without entering.
 */
class AdviceModeTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(bootRedisAutoConfiguration(), DistributedLockAutoConfiguration.class,
                DistributedLockAnnotationAutoConfiguration.class))
        .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                "spring.data.redis.port=" + redis.server().port(),
                // The weaving agent slows the first calls down; a loaded machine must not
                // turn that into a
                // backend failure.
                "distributed-lock.operation-timeout=15s");

    private final ApplicationContextRunner aspectj = runner.withPropertyValues("distributed-lock.advice-mode=aspectj")
        .withBean(WovenOrderService.class);

    // A final locked method fails a proxy-mode startup unless told to only warn.
    private final ApplicationContextRunner proxy = runner.withPropertyValues("distributed-lock.unguarded-methods=warn")
        .withBean(ProxiedOrderService.class);

    /**
     * Boot's Redis auto-configuration: Boot 4's in the default build, Boot 3's in the
     * boot3 profile.
     */
    private static Class<?> bootRedisAutoConfiguration() {
        for (String name : new String[] {
                "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
                "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration" }) {
            if (ClassUtils.isPresent(name, AdviceModeTest.class.getClassLoader())) {
                return ClassUtils.resolveClassName(name, AdviceModeTest.class.getClassLoader());
            }
        }
        throw new IllegalStateException("No Spring Boot Redis auto-configuration on the class path");
    }

    @BeforeEach
    void newGates() {
        WovenOrderService.gate = new Gate();
        ProxiedOrderService.gate = new Gate();
    }

    @Test
    void aThisCallIsLockedInAspectJMode() {
        aspectj.run(context -> {
            WovenOrderService service = context.getBean(WovenOrderService.class);

            Race race = race(WovenOrderService.gate, () -> service.placeFromInside("1"), "lock:{order:1}");

            race.assertExcluded();
        });
    }

    @Test
    void aFinalMethodIsLockedInAspectJMode() {
        aspectj.run(context -> {
            WovenOrderService service = context.getBean(WovenOrderService.class);

            Race race = race(WovenOrderService.gate, () -> service.ship("2"), "lock:{final:2}");

            race.assertExcluded();
        });
    }

    @Test
    void inProxyModeAThisCallRunsUnguarded() {
        proxy.run(context -> {
            ProxiedOrderService service = context.getBean(ProxiedOrderService.class);
            assertThat(AopUtils.isAopProxy(service)).as("proxy mode proxies the bean").isTrue();

            Race race = race(ProxiedOrderService.gate, () -> service.placeFromInside("3"), "lock:{order:3}");

            race.assertUnguarded();
        });
    }

    @Test
    void inProxyModeAFinalMethodRunsUnguarded() {
        proxy.run(context -> {
            ProxiedOrderService service = context.getBean(ProxiedOrderService.class);

            Race race = race(ProxiedOrderService.gate, () -> service.ship("4"), "lock:{final:4}");

            race.assertUnguarded();
        });
    }

    @Test
    void inProxyModeACallThroughTheBeanIsLocked() {
        proxy.run(context -> {
            ProxiedOrderService service = context.getBean(ProxiedOrderService.class);

            Race race = race(ProxiedOrderService.gate, () -> service.place("5"), "lock:{order:5}");

            race.assertExcluded();
        });
    }

    @Test
    void aspectJModeProxiesNothingAndConfiguresTheWovenAspect() {
        aspectj.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(AopUtils.isAopProxy(context.getBean(WovenOrderService.class))).isFalse();
            assertThat(context).doesNotHaveBean(DistributedLockAdvisor.class)
                .doesNotHaveBean(FinalMethodDetector.class);
            assertThat(context.getBean(AnnotationDistributedLockAspect.class))
                .isSameAs(Aspects.aspectOf(AnnotationDistributedLockAspect.class));
        });
    }

    @Test
    void aPrivateLockedMethodFailsItsCallRatherThanRunUnlocked() {
        aspectj.run(context -> {
            WovenOrderService service = context.getBean(WovenOrderService.class);

            assertThatThrownBy(() -> service.audit("8")).isInstanceOf(InvalidLockDefinitionException.class)
                .hasMessageContaining("hidden(String id)")
                .hasMessageContaining("private");
            assertThat(WovenOrderService.gate.entries()).isZero();
        });
    }

    @Test
    void onceItsContextClosedTheAspectRefusesCallsRatherThanRunThemUnlocked() {
        WovenOrderService service = new WovenOrderService();
        ConfigurableApplicationContext[] closed = new ConfigurableApplicationContext[1];
        aspectj.run(context -> closed[0] = context.getSourceApplicationContext());
        assertThat(closed[0].isActive()).isFalse();

        // Not a bean at all: AspectJ guards any instance of a woven class.
        assertThatThrownBy(() -> service.place("6")).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("before it was configured");
        assertThat(WovenOrderService.gate.entries()).isZero();
    }

    @Test
    void closingAnOlderContextLeavesTheAspectToTheNewerOne() {
        aspectj.run(older -> {
            ConfigurableApplicationContext olderContext = older.getSourceApplicationContext();
            aspectj.run(newer -> {
                olderContext.close();
                WovenOrderService service = newer.getBean(WovenOrderService.class);

                Race race = race(WovenOrderService.gate, () -> service.placeFromInside("9"), "lock:{order:9}");

                race.assertExcluded();
            });
        });
    }

    @Test
    void anObjectThatIsNotABeanIsLockedToo() {
        aspectj.run(context -> {
            WovenOrderService service = new WovenOrderService();

            Race race = race(WovenOrderService.gate, () -> service.place("7"), "lock:{order:7}");

            race.assertExcluded();
        });
    }

    @Test
    void aWovenMethodSkipsWhenTheLockIsBusyAndThrowsWhenRedisIsDown() {
        aspectj.withPropertyValues("distributed-lock.operation-timeout=3s").run(context -> {
            WovenOrderService service = context.getBean(WovenOrderService.class);
            LockHandle other = context.getBean(LockService.class)
                .lock(LockRequest.of("report").withWaitTime(Duration.ZERO));
            try {
                assertThat(service.report()).as("onBusy = SKIP").isNull();
            }
            finally {
                other.release();
            }
            redis.server().stop();
            try {
                assertThatThrownBy(service::report).as("onUnavailable follows distributed-lock.on-unavailable")
                    .isInstanceOf(LockBackendException.class);
            }
            finally {
                redis.server().restart();
            }
            assertThat(WovenOrderService.gate.entries()).as("the method never ran").isZero();
        });
    }

    /**
     * Lets a first call enter and stay inside the method; meanwhile looks for its key in
     * Redis and makes a second call; then lets the first one finish.
     */
    private static Race race(Gate gate, Supplier<Boolean> call, String redisKey) throws Exception {
        CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(call);
        CompletableFuture.anyOf(first, gate.firstInside()).get(30, TimeUnit.SECONDS);
        assertThat(first).as("the first call is still inside the method").isNotDone();
        boolean keyWhileInside = exists(redisKey);
        Object second;
        try {
            second = CompletableFuture.supplyAsync(call).get(30, TimeUnit.SECONDS);
        }
        catch (ExecutionException ex) {
            second = ex.getCause();
        }
        gate.open();
        boolean firstResult = first.get(30, TimeUnit.SECONDS);
        return new Race(redisKey.substring("lock:{".length(), redisKey.length() - 1), firstResult, second,
                keyWhileInside, exists(redisKey), gate.mostInside(), gate.entries());
    }

    private static boolean exists(String redisKey) {
        return Long.valueOf(1).equals(redis.server().command("EXISTS", redisKey));
    }

    /** What one {@link #race} saw. */
    private record Race(String key, boolean first, Object second, boolean keyWhileInside, boolean keyAfter,
            int mostInside, int entries) {

        void assertExcluded() {
            assertThat(keyWhileInside).as("the lock key is in Redis while the first call runs").isTrue();
            assertThat(second).as("the second call could not have the lock")
                .isInstanceOfSatisfying(LockTimeoutException.class,
                        timeout -> assertThat(timeout.getKey()).isEqualTo(key));
            assertThat(entries).as("only the first call ran the method").isOne();
            assertThat(mostInside).isOne();
            assertThat(first).isTrue();
            assertThat(keyAfter).as("released once the first call returned").isFalse();
        }

        void assertUnguarded() {
            assertThat(keyWhileInside).as("no lock key: the call ran without the lock").isFalse();
            assertThat(second).as("the second call ran the method too").isEqualTo(Boolean.TRUE);
            assertThat(mostInside).as("both calls were inside the method at once").isEqualTo(2);
            assertThat(first).isTrue();
        }
    }

}
