package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.distlock.DistributedLock;
import io.github.distlock.LockHandle;
import io.github.distlock.LockService;
import io.github.distlock.aop.DistributedLockInterceptor;
import io.github.distlock.core.LockBackend;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.redis.SpringDataLockBackend;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * A {@code @DistributedLock} method never runs without its lock unless the application
 * says so: every way the lock service can be missing fails the startup with the reason
 * and the fix, {@code distributed-lock.enabled=false} warns, and
 * {@code distributed-lock.redis.connection-factory} picks among several Redis connection
 * factories.
 */
@ExtendWith(OutputCaptureExtension.class)
class NeverSilentlyUnguardedTest {

    /**
     * Two Redis servers: a "cache" and a "session" Redis, as applications with two
     * factories have.
     */
    @RegisterExtension
    static final RedisServerExtension redis = RedisServerExtension.masters(2).resetBeforeEach();

    private static final AutoConfigurations LOCKS = AutoConfigurations.of(BootAutoConfigurations.REDIS,
            DistributedLockAutoConfiguration.class, DistributedLockAnnotationAutoConfiguration.class,
            DistributedLockDisabledAutoConfiguration.class);

    /**
     * A generous operation timeout: the first connection of a cold JVM on a busy machine
     * can take seconds.
     */
    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(LOCKS)
        .withBean(StockService.class)
        .withPropertyValues("distributed-lock.operation-timeout=20s");

    @Test
    void twoConnectionFactoriesWithoutAPrimaryFailTheStartupNamingBoth() {
        runner.withUserConfiguration(TwoFactories.class).run(context -> {
            assertThat(context).hasFailed();
            Throwable failure = context.getStartupFailure();
            assertThat(failure).isInstanceOf(NoLockServiceException.class)
                .hasMessageContaining("'cacheRedis', 'sessionRedis'")
                .hasMessageContaining("none is @Primary");
            FailureAnalysis analysis = new NoLockServiceFailureAnalyzer().analyze(failure);
            assertThat(analysis.getDescription()).contains("there are 2 RedisConnectionFactory beans")
                .contains("'cacheRedis', 'sessionRedis'")
                .contains(StockService.class.getName() + ".sell(String");
            assertThat(analysis.getAction()).contains("distributed-lock.redis.connection-factory=cacheRedis")
                .contains("@Primary")
                .contains("distributed-lock.enabled=false");
        });
    }

    @Test
    void twoConnectionFactoriesFailTheStartupWithLazyInitializationToo() {
        // spring.main.lazy-initialization=true: the check must not be one of the beans
        // that are never created.
        runner.withUserConfiguration(TwoFactories.class)
            .withBean(LazyInitializationBeanFactoryPostProcessor.class)
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).isInstanceOf(NoLockServiceException.class)
                    .hasMessageContaining("'cacheRedis', 'sessionRedis'");
            });
    }

    @Test
    void twoConnectionFactoriesWithoutAnyLockedMethodStartWithoutALockService() {
        new ApplicationContextRunner().withConfiguration(LOCKS)
            .withUserConfiguration(TwoFactories.class)
            .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockService.class));
    }

    @Test
    void thePropertyNamesTheConnectionFactoryTheLocksUse() {
        runner.withUserConfiguration(TwoFactories.class)
            .withPropertyValues("distributed-lock.redis.connection-factory=sessionRedis")
            .run(context -> {
                assertThat(context).hasNotFailed().getBean(LockBackend.class).isInstanceOf(LettuceLockBackend.class);
                assertThat(context.getBean(StockService.class).sell("sku-1")).isEqualTo("sold");
                try (LockHandle handle = context.getBean(LockService.class)
                    .lock("order:1", Duration.ofSeconds(30), Duration.ZERO)) {
                    assertThat(redis.server(1).get("lock:{order:1}")).isNotNull();
                    assertThat(redis.server(0).get("lock:{order:1}")).isNull();
                }
            });
    }

    @Test
    void thePropertyCanNameAJedisFactoryAmongLettuceOnes() {
        runner.withUserConfiguration(LettuceAndJedisFactories.class)
            .withPropertyValues("distributed-lock.redis.connection-factory=jedisRedis")
            .run(context -> {
                assertThat(context).hasNotFailed().getBean(LockBackend.class).isInstanceOf(SpringDataLockBackend.class);
                try (LockHandle handle = context.getBean(LockService.class)
                    .lock("order:2", Duration.ofSeconds(30), Duration.ZERO)) {
                    assertThat(redis.server(1).get("lock:{order:2}")).isNotNull();
                    assertThat(redis.server(0).get("lock:{order:2}")).isNull();
                }
            });
    }

    @Test
    void thePrimaryConnectionFactoryIsUsedWithoutTheProperty() {
        runner.withUserConfiguration(TwoFactoriesSessionPrimary.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(LockService.class);
            try (LockHandle handle = context.getBean(LockService.class)
                .lock("order:3", Duration.ofSeconds(30), Duration.ZERO)) {
                assertThat(redis.server(1).get("lock:{order:3}")).isNotNull();
                assertThat(redis.server(0).get("lock:{order:3}")).isNull();
            }
        });
    }

    @Test
    void aPropertyNamingNoBeanFailsTheStartupListingTheFactories() {
        runner.withUserConfiguration(TwoFactories.class)
            .withPropertyValues("distributed-lock.redis.connection-factory=sesionRedis")
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("distributed-lock.redis.connection-factory")
                    .hasMessageContaining("sesionRedis")
                    .hasMessageContaining("'cacheRedis', 'sessionRedis'");
            });
    }

    @Test
    void aPropertyNamingABeanThatIsNoConnectionFactoryFailsTheStartup() {
        runner.withUserConfiguration(TwoFactories.class)
            .withBean("notRedis", StringBuilder.class)
            .withPropertyValues("distributed-lock.redis.connection-factory=notRedis")
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("java.lang.StringBuilder, not a RedisConnectionFactory");
            });
    }

    @Test
    void disabledRunsTheMethodsWithoutALockAndWarnsNamingThem(CapturedOutput output) {
        runner.withUserConfiguration(TwoFactories.class)
            .withPropertyValues("distributed-lock.enabled=false")
            .run(context -> {
                assertThat(context).hasNotFailed()
                    .doesNotHaveBean(LockService.class)
                    .doesNotHaveBean(DistributedLockInterceptor.class);
                assertThat(context.getBean(StockService.class).sell("sku-2")).isEqualTo("sold");
            });
        assertThat(output).contains("WARN")
            .contains("distributed-lock.enabled=false: 1 @DistributedLock method(s) " + "run WITHOUT a lock")
            .contains(StockService.class.getName() + ".sell(String");
    }

    @Test
    void enabledLogsNoUnguardedWarning(CapturedOutput output) {
        runner.withPropertyValues("spring.data.redis.port=" + redis.server(0).port()).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(LockService.class);
            assertThat(context).doesNotHaveBean(UnguardedMethodsWarning.class);
        });
        assertThat(output).doesNotContain("run WITHOUT a lock");
    }

    @Test
    void aLockServiceThatIsNotAnAutowireCandidateFailsTheStartup() {
        // Boot's conditions ignore such a bean, so with two factories no lock service is
        // auto-configured beside it,
        // and the interceptor, which is injected like any bean, could not use it either.
        runner.withUserConfiguration(TwoFactories.class, HiddenLockService.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).isInstanceOf(NoLockServiceException.class)
                .hasMessageContaining("the LockService bean 'hiddenLockService' is not an autowire candidate");
        });
    }

    @Test
    void severalLockServicesWithoutAPrimaryFailTheStartup() {
        runner.withUserConfiguration(TwoFactories.class, TwoLockServices.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).isInstanceOf(NoLockServiceException.class)
                .hasMessageContaining("there are 2 LockService beans, first, second, and none is @Primary");
        });
    }

    @Test
    void withoutAnyConnectionFactoryTheStartupFailsSayingSo() {
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                    DistributedLockAnnotationAutoConfiguration.class))
            .withBean(StockService.class)
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).isInstanceOf(NoLockServiceException.class)
                    .hasMessageContaining("there is no RedisConnectionFactory bean to lock on")
                    .hasMessageContaining("spring.data.redis.*");
            });
    }

    @Test
    void withoutSpringDataRedisTheStartupFailsSayingSo() {
        // An interface-based proxy: a class-based one cannot be generated through the
        // filtering class loader.
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                    DistributedLockAnnotationAutoConfiguration.class))
            .withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
            .withBean(Sales.class, SalesService::new)
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).isInstanceOf(NoLockServiceException.class)
                    .hasMessageContaining("Spring Data Redis is not on the classpath")
                    .hasMessageContaining("spring-boot-starter-data-redis");
            });
    }

    @Test
    void withoutTheRedisBackendModuleTheStartupFailsSayingSo() {
        // Spring Data Redis is there (Boot's Redis auto-configuration runs), lock-redis
        // is not.
        new ApplicationContextRunner().withConfiguration(LOCKS)
            .withClassLoader(new FilteredClassLoader("io.github.distlock.redis.", "io.github.distlock.redlock."))
            .withBean(Sales.class, SalesService::new)
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).isInstanceOf(NoLockServiceException.class)
                    .hasMessageContaining("io.github.distlock:lock-redis) is not on the classpath")
                    .hasMessageContaining("lock-spring-boot-starter")
                    .hasMessageContaining("InMemoryLockBackend");
            });
    }

    @Test
    void anExcludedLockAutoConfigurationFailsTheStartupWithBootsFailureReport(CapturedOutput output) {
        SpringApplication application = new SpringApplication(ExcludingApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThat(run(application, "--spring.data.redis.port=" + redis.server(0).port())).isFalse();
        assertThat(output).contains("APPLICATION FAILED TO START")
            .contains("DistributedLockAutoConfiguration is excluded")
            .contains(StockService.class.getName() + ".sell(String")
            .contains("Action:")
            .contains("Remove the exclusion");
    }

    @Test
    void anInvalidAnnotationFailsTheStartupWithBootsFailureReport(CapturedOutput output) {
        SpringApplication application = new SpringApplication(InvalidAnnotationApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThat(run(application, "--spring.data.redis.port=" + redis.server(0).port())).isFalse();
        assertThat(output).contains("APPLICATION FAILED TO START")
            .contains("Invalid @DistributedLock on " + TypoService.class.getName() + ".sell(String")
            .contains("Action:")
            .contains("Correct the key attribute of @DistributedLock on TypoService.sell");
    }

    /** Whether the application started; closes it if it did. */
    private static boolean run(SpringApplication application, String... args) {
        try {
            application.run(args).close();
            return true;
        }
        catch (RuntimeException ex) {
            return false;
        }
    }

    /**
     * A lock service that refuses every call with the method's name, to show that a call
     * went through it.
     */
    private static LockService unusableLockService() {
        return (LockService) Proxy.newProxyInstance(LockService.class.getClassLoader(),
                new Class<?>[] { LockService.class }, (proxy, method, args) -> switch (method.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> "an unusable LockService";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private static LettuceConnectionFactory lettuce(RedisTestServer server) {
        return new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
    }

    static class StockService {

        @DistributedLock(key = "'stock:' + #sku")
        public String sell(String sku) {
            return "sold";
        }

    }

    public interface Sales {

        @DistributedLock(key = "'stock:' + #sku")
        String sell(String sku);

    }

    static class SalesService implements Sales {

        @Override
        public String sell(String sku) {
            return "sold";
        }

    }

    static class TypoService {

        @DistributedLock(key = "#skuu")
        public String sell(String sku) {
            return "sold";
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class TwoFactories {

        @Bean
        LettuceConnectionFactory cacheRedis() {
            return lettuce(redis.server(0));
        }

        @Bean
        LettuceConnectionFactory sessionRedis() {
            return lettuce(redis.server(1));
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class TwoFactoriesSessionPrimary {

        @Bean
        LettuceConnectionFactory cacheRedis() {
            return lettuce(redis.server(0));
        }

        @Bean
        @Primary
        LettuceConnectionFactory sessionRedis() {
            return lettuce(redis.server(1));
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class LettuceAndJedisFactories {

        @Bean
        LettuceConnectionFactory cacheRedis() {
            return lettuce(redis.server(0));
        }

        @Bean
        JedisConnectionFactory jedisRedis() {
            return new JedisConnectionFactory(
                    new RedisStandaloneConfiguration(redis.server(1).host(), redis.server(1).port()));
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class HiddenLockService {

        @Bean(autowireCandidate = false)
        LockService hiddenLockService() {
            return unusableLockService();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class TwoLockServices {

        @Bean
        LockService first() {
            return unusableLockService();
        }

        @Bean
        LockService second() {
            return unusableLockService();
        }

    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration(exclude = DistributedLockAutoConfiguration.class)
    static class ExcludingApplication {

        @Bean
        StockService stockService() {
            return new StockService();
        }

    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class InvalidAnnotationApplication {

        @Bean
        TypoService typoService() {
            return new TypoService();
        }

    }

}
