package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import com.jayway.jsonpath.JsonPath;

import io.github.distlock.LockHandle;
import io.github.distlock.LockKeys;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.HandOverNotifications;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.redis.HandOverSubscriber;
import io.github.distlock.redis.RedisHandOverNotifications;
import io.github.distlock.redis.SpringDataLockBackend;

/**
 * Each condition of {@link DistributedLockAutoConfiguration} and of its backend
 * configurations (one per driver), and the startup validation of its properties. No Redis
 * is needed: the connection factory connects lazily.
 */
class DistributedLockAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS, DistributedLockAutoConfiguration.class));

    @Test
    void providesTheLockServiceOnTopOfBootsRedisConnectionFactory() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(LockService.class);
            assertThat(context).getBean(LockService.class).isInstanceOf(DefaultLockService.class);
            assertThat(context).getBean(LockBackend.class).isInstanceOf(LettuceLockBackend.class);
            assertThat(context).hasSingleBean(LeaseWatchdog.class);
            DistributedLockProperties properties = context.getBean(DistributedLockProperties.class);
            assertThat(properties.getKeyPrefix()).isEqualTo("lock:");
            assertThat(properties.getDefaultTtl()).hasSeconds(30);
            assertThat(properties.getDefaultWaitTime()).hasSeconds(3);
            assertThat(properties.getOperationTimeout()).hasSeconds(2);
            assertThat(properties.getWatchdog().isEnabled()).isTrue();
        });
    }

    @Test
    void backsOffWhenDisabled() {
        runner.withPropertyValues("distributed-lock.enabled=false")
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockService.class)
                .doesNotHaveBean(LockBackend.class)
                .doesNotHaveBean(LeaseWatchdog.class));
    }

    @Test
    void backsOffWhenSpringDataRedisIsAbsent() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class))
            .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockService.class));
    }

    @Test
    void aLettuceConnectionFactoryGetsTheNativeLettuceBackendAndTheReleaseSubscriber() {
        runner.run(context -> {
            assertThat(context).getBean(LockBackend.class).isInstanceOf(LettuceLockBackend.class);
            assertThat(context).hasSingleBean(HandOverSubscriber.class).doesNotHaveBean(SpringDataLockBackend.class);
        });
    }

    @Test
    void aLettuceConnectionFactoryOutsideAClusterGetsReleaseNotificationsOnTheGlobalChannel() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(RedisHandOverNotifications.class);
            assertThat(context.getBean(RedisHandOverNotifications.class).mode())
                .isEqualTo(RedisHandOverNotifications.Mode.GLOBAL);
        });
    }

    @Test
    void shardedPubSubIsLettuceOnlyJedisAndUserBackendsGetNoReleaseNotifications() {
        runner.withPropertyValues("spring.data.redis.client-type=jedis")
            .run(context -> assertThat(context).doesNotHaveBean(RedisHandOverNotifications.class));
        runner.withUserConfiguration(CustomBackend.class)
            .run(context -> assertThat(context).doesNotHaveBean(RedisHandOverNotifications.class));
    }

    @Test
    void clusterNotificationsIsBoundAndDefaultsToAuto() {
        runner.run(context -> assertThat(context.getBean(DistributedLockProperties.class).getClusterNotifications())
            .isEqualTo(DistributedLockProperties.ClusterNotifications.AUTO));
        runner.withPropertyValues("distributed-lock.cluster-notifications=global")
            .run(context -> assertThat(context.getBean(DistributedLockProperties.class).getClusterNotifications())
                .isEqualTo(DistributedLockProperties.ClusterNotifications.GLOBAL));
    }

    @Test
    void anUnknownClusterNotificationsValueFailsTheStartupNamingTheProperty() {
        runner.withPropertyValues("distributed-lock.cluster-notifications=sharded-always").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("sharded-always")
                .hasStackTraceContaining("Failed to bind properties under 'distributed-lock.cluster-notifications'");
        });
    }

    @Test
    void aJedisConnectionFactoryGetsTheSpringDataBackendAndTheReleaseSubscriber() {
        runner.withPropertyValues("spring.data.redis.client-type=jedis").run(context -> {
            assertThat(context).getBean(RedisConnectionFactory.class).isInstanceOf(JedisConnectionFactory.class);
            assertThat(context).getBean(LockBackend.class).isInstanceOf(SpringDataLockBackend.class);
            assertThat(context).hasSingleBean(HandOverSubscriber.class).doesNotHaveBean(LettuceLockBackend.class);
            assertThat(context).hasSingleBean(LockService.class);
        });
    }

    @Test
    void worksWithJedisWhenLettuceIsNotOnTheClasspath() {
        runner.withClassLoader(new FilteredClassLoader("io.lettuce.core")).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).getBean(RedisConnectionFactory.class).isInstanceOf(JedisConnectionFactory.class);
            assertThat(context).getBean(LockBackend.class).isInstanceOf(SpringDataLockBackend.class);
            assertThat(context).hasSingleBean(HandOverSubscriber.class).hasSingleBean(LockService.class);
        });
    }

    @Test
    void aLettuceFactoryDeclaredAsAPlainRedisConnectionFactoryGetsTheSpringDataBackend() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withUserConfiguration(PlainlyDeclaredFactory.class)
            .run(context -> {
                assertThat(context).getBean(LockBackend.class).isInstanceOf(SpringDataLockBackend.class);
                assertThat(context).hasSingleBean(HandOverSubscriber.class);
            });
    }

    @Test
    void aUserDefinedBackendWinsAndNothingRedisSpecificIsWired() {
        runner.withUserConfiguration(CustomBackend.class).run(context -> {
            assertThat(context.getBean(LockBackend.class)).isSameAs(CustomBackend.BACKEND);
            assertThat(context).doesNotHaveBean(LettuceLockBackend.class)
                .doesNotHaveBean(SpringDataLockBackend.class)
                .doesNotHaveBean(HandOverSubscriber.class);
        });
        runner.withPropertyValues("spring.data.redis.client-type=jedis")
            .withUserConfiguration(CustomBackend.class)
            .run(context -> {
                assertThat(context.getBean(LockBackend.class)).isSameAs(CustomBackend.BACKEND);
                assertThat(context).doesNotHaveBean(HandOverSubscriber.class);
            });
    }

    @Test
    void aUserDefinedBackendNeedsNoRedisConnectionFactoryNorSpringDataRedis() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withUserConfiguration(CustomBackend.class)
            .withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class))
            .run(context -> {
                assertThat(context).hasNotFailed()
                    .hasSingleBean(LockService.class)
                    .doesNotHaveBean(HandOverSubscriber.class);
                assertThat(context.getBean(LockBackend.class)).isSameAs(CustomBackend.BACKEND);
            });
    }

    @Test
    void aUserDefinedBackendWorksNextToSeveralConnectionFactories() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withUserConfiguration(TwoConnectionFactories.class, CustomBackend.class)
            .run(context -> {
                assertThat(context).hasNotFailed()
                    .hasSingleBean(LockService.class)
                    .doesNotHaveBean(HandOverSubscriber.class);
                LockHandle handle = context.getBean(LockService.class)
                    .lock("order:42", Duration.ofSeconds(5), Duration.ZERO);
                assertThat(handle.isHeld()).isTrue();
                // The minimal backend issues no fencing tokens: asking fails, naming the
                // backend.
                assertThatThrownBy(handle::fencingToken).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("FencingLockBackend");
                assertThatThrownBy(
                        () -> context.getBean(LockService.class).tryLock(LockRequest.of("order:43").withFencingToken()))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("order:43")
                    .hasMessageContaining("FencingLockBackend");
                assertThat(handle.release()).isTrue();
            });
    }

    @Test
    void aUserDefinedBackendThatDeliversItsOwnHandOversWakesTheWaiters() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withUserConfiguration(NotifyingBackend.class)
            .run(context -> {
                assertThat(context).hasNotFailed().hasSingleBean(LockService.class);
                LockWaiters waiters = context.getBean(LockWaiters.class);
                LockKey key = new LockKey("a", "custom/a");
                assertThat(waiters.notificationsDelivered(key)).isFalse();
                assertThat(waiters.startNotifications(key)).isTrue();
                assertThat(waiters.notificationsDelivered(key)).isTrue();
            });
    }

    @Test
    void backsOffWithSeveralConnectionFactoriesAndNoBackend() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withUserConfiguration(TwoConnectionFactories.class)
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockService.class)
                .doesNotHaveBean(LockBackend.class)
                .doesNotHaveBean(HandOverSubscriber.class));
    }

    @Test
    void backsOffWithoutARedisConnectionFactoryBean() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockService.class));
    }

    @Test
    void userDefinedBeansReplaceTheAutoConfiguredOnes() {
        runner.withUserConfiguration(CustomLockService.class).run(context -> {
            assertThat(context).hasSingleBean(LockService.class);
            assertThat(context.getBean(LockService.class)).isSameAs(CustomLockService.SERVICE);
        });
        runner.withUserConfiguration(CustomBackend.class).run(context -> {
            assertThat(context.getBean(LockBackend.class)).isSameAs(CustomBackend.BACKEND);
            assertThat(context).hasSingleBean(LockService.class);
        });
    }

    @Test
    void propertiesAreBound() {
        runner
            .withPropertyValues("distributed-lock.key-prefix=shop:lock:", "distributed-lock.default-ttl=10s",
                    "distributed-lock.default-wait-time=0", "distributed-lock.operation-timeout=250ms",
                    "distributed-lock.watchdog.enabled=false", "distributed-lock.aspect-order=5")
            .run(context -> {
                DistributedLockProperties properties = context.getBean(DistributedLockProperties.class);
                assertThat(properties.getKeyPrefix()).isEqualTo("shop:lock:");
                assertThat(properties.getDefaultTtl()).hasSeconds(10);
                assertThat(properties.getDefaultWaitTime()).isZero();
                assertThat(properties.getOperationTimeout()).hasMillis(250);
                assertThat(properties.getWatchdog().isEnabled()).isFalse();
                assertThat(properties.getAspectOrder()).isEqualTo(5);
            });
    }

    @Test
    void aKeyPrefixWithBracesFailsTheStartupNamingTheProperty() {
        assertStartupFails("distributed-lock.key-prefix=app{x}:", "distributed-lock.key-prefix", "app{x}:", "hash tag");
    }

    @Test
    void theMaximumKeyLengthIs1024ByDefaultAndReachesTheLockService() {
        runner.run(context -> {
            assertThat(context.getBean(DistributedLockProperties.class).getMaxKeyLength()).isEqualTo(1024)
                .isEqualTo(LockKeys.DEFAULT_MAX_LENGTH);
            assertThat(context.getBean(LockService.class).maxKeyLength()).isEqualTo(1024);
        });
        runner.withPropertyValues("distributed-lock.max-key-length=200").run(context -> {
            assertThat(context.getBean(DistributedLockProperties.class).getMaxKeyLength()).isEqualTo(200);
            assertThat(context.getBean(LockService.class).maxKeyLength()).isEqualTo(200);
        });
    }

    @Test
    void aMaximumKeyLengthBelowOneFailsTheStartupNamingThePropertyAndTheDefault() {
        assertStartupFails("distributed-lock.max-key-length=0", "distributed-lock.max-key-length", "'0'",
                "Remove the property for the default 1024, or give a positive number of characters such as 256.");
        assertStartupFails("distributed-lock.max-key-length=-5", "distributed-lock.max-key-length", "'-5'",
                "must be at least 1 character");
    }

    @Test
    void aNonPositiveTtlFailsTheStartup() {
        assertStartupFails("distributed-lock.default-ttl=0s", "distributed-lock.default-ttl", "PT0S", "positive");
        assertStartupFails("distributed-lock.default-ttl=-5s", "distributed-lock.default-ttl", "PT-5S", "positive");
    }

    @Test
    void aNegativeWaitTimeFailsTheStartup() {
        assertStartupFails("distributed-lock.default-wait-time=-1s", "distributed-lock.default-wait-time", "PT-1S",
                "0s to try once");
    }

    @Test
    void aNonPositiveOperationTimeoutFailsTheStartup() {
        assertStartupFails("distributed-lock.operation-timeout=0ms", "distributed-lock.operation-timeout", "PT0S",
                "positive");
    }

    @Test
    void anOperationTimeoutTooLongToTimeFailsTheStartupInsteadOfOverflowing() {
        assertStartupFails("distributed-lock.operation-timeout=110000d", "distributed-lock.operation-timeout",
                "PT2640000H", "at most 36500d");
    }

    @Test
    void replicaAcksAreOffByDefaultAndBound() {
        runner.run(context -> {
            DistributedLockProperties properties = context.getBean(DistributedLockProperties.class);
            assertThat(properties.getReplicaAcks()).isZero();
            assertThat(properties.getReplicaAckTimeout()).hasSeconds(1);
        });
        runner.withPropertyValues("distributed-lock.replica-acks=2", "distributed-lock.replica-ack-timeout=500ms")
            .run(context -> {
                assertThat(context).hasNotFailed();
                DistributedLockProperties properties = context.getBean(DistributedLockProperties.class);
                assertThat(properties.getReplicaAcks()).isEqualTo(2);
                assertThat(properties.getReplicaAckTimeout()).hasMillis(500);
                assertThat(context).getBean(LockBackend.class).isInstanceOf(LettuceLockBackend.class);
            });
    }

    @Test
    void aNegativeReplicaAcksFailsTheStartup() {
        assertStartupFails("distributed-lock.replica-acks=-1", "distributed-lock.replica-acks", "-1",
                "Use 0 to wait for no replica");
    }

    @Test
    void aReplicaAckTimeoutUnderOneMillisecondFailsTheStartup() {
        assertStartupFails("distributed-lock.replica-ack-timeout=0ms", "distributed-lock.replica-ack-timeout", "PT0S",
                "at least 1ms");
        assertStartupFails("distributed-lock.replica-ack-timeout=500us", "distributed-lock.replica-ack-timeout",
                "500us", "0 would wait for ever");
    }

    @Test
    void aReplicaAckTimeoutLongerThanTheOperationTimeoutFailsTheStartupWhenAcksAreAskedFor() {
        runner.withPropertyValues("distributed-lock.replica-acks=1", "distributed-lock.replica-ack-timeout=3s")
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("distributed-lock.replica-ack-timeout")
                    .hasMessageContaining("3s")
                    .hasMessageContaining("distributed-lock.operation-timeout (2s)")
                    .hasMessageContaining("Lower replica-ack-timeout or raise operation-timeout");
            });
    }

    @Test
    void aShortOperationTimeoutDoesNotTripOverTheReplicaAckTimeoutWhileAcksAreOff() {
        runner.withPropertyValues("distributed-lock.operation-timeout=200ms")
            .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void aRenewalRatioOutsideZeroToOneFailsTheStartup() {
        assertStartupFails("distributed-lock.watchdog.renewal-ratio=1.5", "distributed-lock.watchdog.renewal-ratio",
                "1.5", "between 0 and 1");
    }

    @Test
    void anUnparsableDurationFailsTheStartupNamingTheProperty() {
        runner.withPropertyValues("distributed-lock.default-ttl=thirty seconds").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("thirty seconds");
            // Boot's BindException carries the property name; its failure analyzer prints
            // it.
            assertThat(context.getStartupFailure())
                .hasStackTraceContaining("Failed to bind properties under 'distributed-lock.default-ttl'");
        });
    }

    @Test
    void aSubMillisecondDefaultTtlFailsTheStartupNamingTheOneMillisecondMinimum() {
        assertStartupFails("distributed-lock.default-ttl=1ns", "distributed-lock.default-ttl", "1ns",
                "shorter than 1ms");
        assertStartupFails("distributed-lock.default-ttl=500us", "distributed-lock.default-ttl", "500us",
                "shorter than 1ms");
    }

    @Test
    void aDefaultTtlLongerThanTheLeaseClockCanTimeFailsTheStartupNamingTheMaximum() {
        assertStartupFails("distributed-lock.default-ttl=300000d", "distributed-lock.default-ttl", "300000d",
                "longer than 36500d");
    }

    @Test
    void aDefaultWaitTimeLongerThanTheDeadlineClockCanTimeFailsTheStartup() {
        assertStartupFails("distributed-lock.default-wait-time=300000d", "distributed-lock.default-wait-time",
                "300000d", "longer than 36500d");
    }

    @Test
    void aBareNumberInAPropertyIsMilliseconds() {
        runner.withPropertyValues("distributed-lock.default-ttl=5000")
            .run(context -> assertThat(context.getBean(DistributedLockProperties.class).getDefaultTtl())
                .isEqualTo(Duration.ofMillis(5000)));
    }

    @Test
    void anEmptyKeyPrefixFailsTheStartupNamingTheReleaseChannelAndTheFix() {
        assertStartupFails("distributed-lock.key-prefix=", "distributed-lock.key-prefix", "may not be empty",
                "<prefix>released");
        assertStartupFails("distributed-lock.key-prefix=", "distributed-lock.key-prefix", "~lock:*", "'myapp:lock:'");
    }

    @Test
    void anEnabledValueThatIsNotABooleanFailsTheStartupInsteadOfTurningTheStarterOff() {
        assertStartupFails("distributed-lock.enabled=nope", "distributed-lock.enabled", "nope", "true or false");
        assertStartupFails("distributed-lock.enabled=", "distributed-lock.enabled", "''", "true or false");
    }

    @Test
    void anEnabledValueSpringReadsAsTrueTurnsTheStarterOn() {
        runner.withPropertyValues("distributed-lock.enabled=on")
            .run(context -> assertThat(context).hasSingleBean(LockService.class));
    }

    @Test
    void anUnknownPropertyFailsTheStartupNamingItAndTheCloseValidName() {
        assertStartupFails("distributed-lock.default-tll=5s", "distributed-lock.default-tll",
                "Did you mean distributed-lock.default-ttl?", "distributed-lock.watchdog.renewal-ratio");
    }

    @Test
    void anUnknownNestedPropertyFailsTheStartup() {
        assertStartupFails("distributed-lock.watchdog.renewal-ration=0.5", "distributed-lock.watchdog.renewal-ration",
                "Did you mean distributed-lock.watchdog.renewal-ratio?", "Correct the name");
    }

    @Test
    void anUnknownPropertyFailsTheStartupEvenWhenTheStarterIsTurnedOff() {
        runner.withPropertyValues("distributed-lock.enabled=false", "distributed-lock.key-prefx=app:")
            .run(context -> assertThat(context.getStartupFailure()).rootCause()
                .hasMessageContaining("distributed-lock.key-prefx")
                .hasMessageContaining("distributed-lock.key-prefix"));
    }

    @Test
    void anUnknownSystemPropertyFailsTheStartup() {
        runner.withSystemProperties("distributed-lock.operation-timout=1s")
            .run(context -> assertThat(context.getStartupFailure()).rootCause()
                .hasMessageContaining("distributed-lock.operation-timout")
                .hasMessageContaining("Did you mean distributed-lock.operation-timeout?"));
    }

    @Test
    void anUnknownEnvironmentVariableFailsTheStartupAndKnownOnesBind() {
        runner.withInitializer(environmentVariables(Map.of("DISTRIBUTED_LOCK_DEFAULT_TLL", "5s")))
            .run(context -> assertThat(context.getStartupFailure()).rootCause()
                .hasMessageContaining("DISTRIBUTED_LOCK_DEFAULT_TLL")
                .hasMessageContaining("DISTRIBUTED_LOCK_DEFAULT_TTL (distributed-lock.default-ttl)"));
        runner
            .withInitializer(environmentVariables(Map.of("DISTRIBUTED_LOCK_DEFAULT_TTL", "5s",
                    "DISTRIBUTEDLOCK_WATCHDOG_RENEWALRATIO", "0.5", "DISTRIBUTED_LOCK_UNGUARDED_METHODS", "warn")))
            .run(context -> {
                assertThat(context).hasNotFailed();
                DistributedLockProperties properties = context.getBean(DistributedLockProperties.class);
                assertThat(properties.getDefaultTtl()).hasSeconds(5);
                assertThat(properties.getWatchdog().getRenewalRatio()).isEqualTo(0.5);
                assertThat(properties.getUnguardedMethods()).isEqualTo(DistributedLockProperties.UnguardedMethods.WARN);
            });
    }

    @Test
    void anUnknownPropertyInAYamlFileFailsTheStartupAndRelaxedNamesBind() {
        runner.withInitializer(yaml("distlock/typo.yml"))
            .run(context -> assertThat(context.getStartupFailure()).rootCause()
                .hasMessageContaining("distributed-lock.watchdog.renewal-ration")
                .hasMessageContaining("distlock/typo.yml"));
        runner.withInitializer(yaml("distlock/valid.yml")).run(context -> {
            assertThat(context).hasNotFailed();
            DistributedLockProperties properties = context.getBean(DistributedLockProperties.class);
            assertThat(properties.getDefaultTtl()).hasSeconds(10);
            assertThat(properties.getWatchdog().getRenewalRatio()).isEqualTo(0.5);
        });
    }

    @Test
    void everyPropertyOfThePropertiesClassIsAKnownName() {
        runner
            .withPropertyValues("distributed-lock.enabled=true", "distributed-lock.key-prefix=app:",
                    "distributed-lock.default-ttl=10s", "distributed-lock.default-wait-time=1s",
                    "distributed-lock.operation-timeout=1s", "distributed-lock.aspect-order=1",
                    "distributed-lock.throw-on-lease-lost=false", "distributed-lock.unguarded-methods=warn",
                    "distributed-lock.cluster-notifications=global", "distributed-lock.watchdog.enabled=false",
                    "distributed-lock.watchdog.renewal-ratio=0.5", "distributed-lock.replica-acks=0",
                    "distributed-lock.replica-ack-timeout=1s", "distributed-lock.advice-mode=proxy")
            .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void configurationMetadataIsGeneratedForEveryProperty() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            String metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(metadata).contains("\"distributed-lock.enabled\"", "\"distributed-lock.key-prefix\"",
                    "\"distributed-lock.default-ttl\"", "\"distributed-lock.default-wait-time\"",
                    "\"distributed-lock.operation-timeout\"", "\"distributed-lock.aspect-order\"",
                    "\"distributed-lock.watchdog.enabled\"", "\"distributed-lock.watchdog.renewal-ratio\"",
                    "\"distributed-lock.replica-acks\"", "\"distributed-lock.replica-ack-timeout\"",
                    "\"distributed-lock.advice-mode\"");
            assertThat(metadata).contains("Upper bound on every single lock command");
        }
    }

    @Test
    void configurationMetadataDescribesEveryPropertyInPlainTextWithItsDefault() throws Exception {
        List<Map<String, Object>> all;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            all = JsonPath.read(new String(in.readAllBytes(), StandardCharsets.UTF_8), "$.properties");
        }
        List<Map<String, Object>> properties = all.stream()
            .filter(property -> ((String) property.get("name")).startsWith("distributed-lock."))
            .toList();
        // A list or map property is one entry in the metadata; its elements are name[0],
        // name.key, ...
        assertThat(properties).extracting(property -> property.get("name"))
            .containsExactlyInAnyOrderElementsOf(
                    DistributedLockPropertyNames.all().stream().map(name -> name.replace(".*", "")).toList());
        DistributedLockProperties defaults = new DistributedLockProperties();
        for (Map<String, Object> property : properties) {
            String name = (String) property.get("name");
            assertThat((String) property.get("description")).as(name + " description")
                .isNotBlank()
                .doesNotContain("{@")
                .doesNotContain("<code>");
            // Every property has a default: each field of the properties class is
            // initialised. An
            // empty list has none to show (the processor omits it), so its description
            // says so.
            if (((String) property.get("type")).startsWith("java.util.List")) {
                assertThat((String) property.get("description")).as(name + " description")
                    .contains("Empty (the default)");
            }
            else {
                assertThat(property.get("defaultValue")).as(name + " defaultValue").isNotNull();
            }
        }
        assertThat(properties).filteredOn(property -> property.get("name").equals("distributed-lock.aspect-order"))
            .singleElement()
            .extracting(property -> ((Number) property.get("defaultValue")).intValue())
            .isEqualTo(defaults.getAspectOrder());
        assertThat(properties)
            .filteredOn(property -> property.get("name").equals("distributed-lock.watchdog.renewal-ratio"))
            .singleElement()
            .extracting(property -> ((Number) property.get("defaultValue")).doubleValue())
            .isEqualTo(defaults.getWatchdog().getRenewalRatio());
    }

    private static ApplicationContextInitializer<ConfigurableApplicationContext> environmentVariables(
            Map<String, Object> variables) {
        return context -> context.getEnvironment()
            .getPropertySources()
            .replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new SystemEnvironmentPropertySource(
                    StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables));
    }

    private static ApplicationContextInitializer<ConfigurableApplicationContext> yaml(String path) {
        return context -> {
            try {
                new YamlPropertySourceLoader().load(path, new ClassPathResource(path))
                    .forEach(context.getEnvironment().getPropertySources()::addLast);
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        };
    }

    private void assertStartupFails(String property, String name, String value, String fix) {
        runner.withPropertyValues(property).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                .hasMessageContaining(name)
                .hasMessageContaining(value)
                .hasMessageContaining(fix);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class PlainlyDeclaredFactory {

        @Bean
        RedisConnectionFactory redisConnectionFactory() {
            return new LettuceConnectionFactory();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class CustomLockService {

        static final LockService SERVICE = new LockService() {
            @Override
            public Optional<LockHandle> tryLock(LockRequest request) {
                return Optional.empty();
            }

            @Override
            public LockHandle lock(LockRequest request) {
                throw new UnsupportedOperationException();
            }

            @Override
            public <T> T callLocked(LockRequest request, java.util.concurrent.Callable<T> action) {
                throw new UnsupportedOperationException();
            }
        };

        @Bean
        LockService customLockService() {
            return SERVICE;
        }

    }

    /**
     * A backend that delivers its own hand-over announcements: started on the first wait.
     */
    @Configuration(proxyBeanMethods = false)
    static class NotifyingBackend {

        @Bean
        LockBackend notifyingLockBackend() {
            abstract class Notifying implements LockBackend, HandOverNotifications {

            }
            AtomicBoolean started = new AtomicBoolean();
            return new Notifying() {
                @Override
                public LockKey lockKey(String name) {
                    return CustomBackend.BACKEND.lockKey(name);
                }

                @Override
                public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
                    return CustomBackend.BACKEND.tryAcquire(key, token, ttlMillis);
                }

                @Override
                public boolean release(LockKey key, String token) {
                    return true;
                }

                @Override
                public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
                    CustomBackend.BACKEND.renew(renewals, outcomes);
                }

                @Override
                public boolean startDelivery(LockKey key) {
                    started.set(true);
                    return true;
                }

                @Override
                public boolean isDelivering(LockKey key) {
                    return started.get();
                }
            };
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class TwoConnectionFactories {

        @Bean
        LettuceConnectionFactory ordersConnectionFactory() {
            return new LettuceConnectionFactory();
        }

        @Bean
        LettuceConnectionFactory sessionsConnectionFactory() {
            return new LettuceConnectionFactory();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class CustomBackend {

        /** The bare minimum: no fencing tokens, no wait queue, no key prefix of ours. */
        static final LockBackend BACKEND = new LockBackend() {
            @Override
            public io.github.distlock.core.LockKey lockKey(String name) {
                return new io.github.distlock.core.LockKey(name, "custom/" + name);
            }

            @Override
            public AcquireResult tryAcquire(io.github.distlock.core.LockKey key, String token, long ttlMillis) {
                return AcquireResult.acquired(0, ttlMillis);
            }

            @Override
            public boolean release(io.github.distlock.core.LockKey key, String token) {
                return true;
            }

            @Override
            public void renew(java.util.List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
                for (int i = 0; i < renewals.size(); i++) {
                    outcomes.outcome(i, RenewalOutcome.RENEWED);
                }
            }
        };

        @Bean
        LockBackend customLockBackend() {
            return BACKEND;
        }

    }

}
