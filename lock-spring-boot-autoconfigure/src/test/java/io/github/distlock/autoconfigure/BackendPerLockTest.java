package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.DistributedLock;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.MultiLockHandle;
import io.github.distlock.UnknownLockBackendException;
import io.github.distlock.actuate.LockBackendHealth;
import io.github.distlock.actuate.LocksEndpoint;
import io.github.distlock.core.ActiveLocks;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.NamedLockBackend;
import io.github.distlock.core.RoutingLockService;
import io.github.distlock.memory.InMemoryLockBackend;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * Locks that choose their store by name: a real Redis as {@code redis}, and an in-memory
 * store contributed as a {@link NamedLockBackend} bean named {@code memory}, as the etcd
 * and ZooKeeper modules contribute theirs. One condition per test.
 */
class BackendPerLockTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS,
                    DistributedLockAutoConfiguration.class, DistributedLockAnnotationAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                    "spring.data.redis.port=" + redis.server().port(), "distributed-lock.operation-timeout=10s");
    }

    private ApplicationContextRunner withMemory() {
        return runner().withUserConfiguration(MemoryBackend.class);
    }

    @Test
    void withoutNamedBackendsTheLockServiceIsTheRedisOneAndRefusesOtherNames() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            LockService locks = context.getBean(LockService.class);
            assertThat(locks).isNotInstanceOf(RoutingLockService.class);

            try (LockHandle held = locks.lock(LockRequest.of("order:1").withBackend("redis"))) {
                assertThat(redis.server().pttl("lock:{order:1}")).isPositive();
            }
            assertThatThrownBy(() -> locks.lock(LockRequest.of("order:1").withBackend("etcd")))
                .isInstanceOf(UnknownLockBackendException.class)
                .hasMessageContaining("\"etcd\"")
                .hasMessageContaining("[redis]")
                .hasMessageContaining("distributed-lock.etcd.endpoints");
        });
    }

    @Test
    void aLockNamingABackendIsKeptThereAndOneNamingNoneOnTheDefault() {
        withMemory().run(context -> {
            assertThat(context).hasNotFailed();
            LockService locks = context.getBean(LockService.class);
            InMemoryLockBackend memory = memoryOf(context);
            assertThat(((RoutingLockService) locks).backendNames()).containsExactlyInAnyOrder("redis", "memory");

            try (LockHandle onRedis = locks.lock(LockRequest.of("order:1"));
                    LockHandle onMemory = locks.lock(LockRequest.of("order:1").withBackend("memory"))) {
                assertThat(redis.server().pttl("lock:{order:1}")).as("on the default, redis").isPositive();
                assertThat(memory.heldLocks()).as("the same name on another store is another lock")
                    .containsExactly("order:1");
                assertThat(locks.tryLock(LockRequest.of("order:1").withBackend("memory").withWaitTime(Duration.ZERO)))
                    .as("and excludes a second holder there")
                    .isEmpty();
                assertThat(onMemory.fencingToken()).isPositive();
            }
            assertThat(memory.heldLocks()).isEmpty();
            assertThat(redis.server().pttl("lock:{order:1}")).isEqualTo(-2);
        });
    }

    @Test
    void theAnnotationsBackendAttributeChoosesTheStoreAndANestedCallJoinsOnlyTheSameStore() {
        withMemory().withBean(Ledger.class).run(context -> {
            assertThat(context).hasNotFailed();
            InMemoryLockBackend memory = memoryOf(context);
            Ledger ledger = context.getBean(Ledger.class);

            List<String> seen = ledger.postOnMemory("42");

            assertThat(seen).containsExactly("memory holds [ledger:42]", "redis holds -2 ms", "nested on redis ran");
            assertThat(memory.heldLocks()).isEmpty();
        });
    }

    @Test
    void anAnnotationNamingAnUnconfiguredBackendFailsTheStartupListingTheConfiguredOnesAndTheProperty() {
        withMemory().withBean(OnZooKeeper.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).isInstanceOf(UnknownLockBackendException.class)
                .hasMessageContaining("OnZooKeeper.run")
                .hasMessageContaining("\"zookeeper\"")
                .hasMessageContaining("redis")
                .hasMessageContaining("memory")
                .hasMessageContaining("distributed-lock.zookeeper.connect-string");
        });
    }

    @Test
    void distributedLockBackendNamesTheDefault() {
        withMemory().withPropertyValues("distributed-lock.backend=memory").run(context -> {
            assertThat(context).hasNotFailed();
            LockService locks = context.getBean(LockService.class);
            InMemoryLockBackend memory = memoryOf(context);

            try (LockHandle held = locks.lock(LockRequest.of("report"))) {
                assertThat(memory.heldLocks()).containsExactly("report");
                assertThat(redis.server().pttl("lock:{report}")).isEqualTo(-2);
            }
            try (LockHandle held = locks.lock(LockRequest.of("report").withBackend("redis"))) {
                assertThat(redis.server().pttl("lock:{report}")).isPositive();
            }
        });
    }

    @Test
    void aDefaultBackendThatIsNotConfiguredFailsTheStartupNamingTheProperty() {
        runner().withPropertyValues("distributed-lock.backend=etcd").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("distributed-lock.backend")
                .hasStackTraceContaining("\"etcd\"")
                .hasStackTraceContaining("[redis]")
                .hasStackTraceContaining("distributed-lock.etcd.endpoints");
        });
    }

    @Test
    void theLocksEndpointListsEachHolderWithItsBackend() {
        withMemory().withBean(ActiveLocks.class).run(context -> {
            LockService locks = context.getBean(LockService.class);
            LocksEndpoint endpoint = new LocksEndpoint(context.getBean(ActiveLocks.class),
                    context.getBean(LockBackend.class));

            try (LockHandle onRedis = locks.lock(LockRequest.of("cart:7"));
                    LockHandle onMemory = locks.lock(LockRequest.of("ledger:42").withBackend("memory"))) {
                assertThat(endpoint.locks().held()).extracting(LocksEndpoint.Holder::key, LocksEndpoint.Holder::backend)
                    .containsExactlyInAnyOrder(tuple("cart:7", "redis"), tuple("ledger:42", "memory"));
            }
            assertThat(endpoint.locks().held()).isEmpty();
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void theHealthCheckPingsEveryNamedBackendToo() {
        withMemory().run(context -> {
            LockBackendHealth.Check check = new LockBackendHealth(context.getBean(LockBackend.class), null,
                    Duration.ofSeconds(10), List.of(context.getBean(NamedLockBackend.class)))
                .check();

            assertThat(check.up()).isTrue();
            assertThat(check.details()).containsKey("nodes");
            Map<String, Object> named = (Map<String, Object>) check.details().get("namedBackends");
            assertThat((Map<String, Object>) named.get("memory")).containsEntry("up", true)
                .containsEntry("backend", "InMemoryLockBackend")
                .containsEntry("quorum", 1);
        });
    }

    @Test
    void aMultiKeyLockKeepsAllItsKeysOnOneBackendAndMixingThemIsRefusedBeforeAnythingIsTaken() {
        withMemory().run(context -> {
            LockService locks = context.getBean(LockService.class);
            InMemoryLockBackend memory = memoryOf(context);

            assertThatThrownBy(() -> locks
                .lockAll(List.of(LockRequest.of("account:a"), LockRequest.of("account:b").withBackend("memory"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("one backend")
                .hasMessageContaining("redis=[account:a]")
                .hasMessageContaining("memory=[account:b]");
            assertThat(memory.heldLocks()).isEmpty();
            assertThat(redis.server().pttl("lock:{account:a}")).isEqualTo(-2);

            try (MultiLockHandle both = locks.lockAll(List.of(LockRequest.of("account:a").withBackend("memory"),
                    LockRequest.of("account:b").withBackend("memory")))) {
                assertThat(memory.heldLocks()).containsExactlyInAnyOrder("account:a", "account:b");
            }
            assertThat(memory.heldLocks()).isEmpty();
        });
    }

    @Test
    void aMinimumHoldIsKeptOnTheBackendTheLockNames() {
        withMemory().run(context -> {
            LockService locks = context.getBean(LockService.class);
            InMemoryLockBackend memory = memoryOf(context);

            LockHandle held = locks.lock(LockRequest.of("hourly")
                .withBackend("memory")
                .withTtl(Duration.ofMinutes(2))
                .withMinHold(Duration.ofMinutes(1)));
            assertThat(held.release()).isTrue();

            assertThat(memory.heldLocks()).containsExactly("hourly");
            assertThat(((RoutingLockService) locks).supportsMinHold("memory")).isTrue();
        });
    }

    @Test
    void twoBackendsWithOneNameFailTheStartup() {
        runner()
            .withBean("secondRedis", NamedLockBackend.class,
                    () -> new NamedLockBackend("redis", new InMemoryLockBackend()))
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure())
                    .hasStackTraceContaining("Two lock backends are named \"redis\"");
            });
    }

    /**
     * The store is no bean of its own: a {@code LockBackend} bean would take the place of
     * Redis as the primary backend.
     */
    @Configuration(proxyBeanMethods = false)
    static class MemoryBackend {

        @Bean
        NamedLockBackend memoryLockBackend() {
            return new NamedLockBackend("memory", new InMemoryLockBackend());
        }

    }

    private static InMemoryLockBackend memoryOf(org.springframework.context.ApplicationContext context) {
        return (InMemoryLockBackend) context.getBean(NamedLockBackend.class).backend();
    }

    static class Ledger {

        private final InMemoryLockBackend memory;

        private final ObjectProvider<Ledger> self;

        Ledger(ObjectProvider<Ledger> self, NamedLockBackend memory) {
            this.self = self;
            this.memory = (InMemoryLockBackend) memory.backend();
        }

        @DistributedLock(key = "'ledger:' + #id", backend = "memory")
        public List<String> postOnMemory(String id) {
            List<String> seen = new java.util.ArrayList<>();
            seen.add("memory holds " + memory.heldLocks());
            seen.add("redis holds " + redis.server().pttl("lock:{ledger:" + id + "}") + " ms");
            // The same key on redis is another lock: the nested call takes it, not joins.
            seen.add(self.getObject().nestedOnRedis(id));
            return seen;
        }

        @DistributedLock(key = "'ledger:' + #id", waitTime = "0s")
        public String nestedOnRedis(String id) {
            return redis.server().pttl("lock:{ledger:" + id + "}") > 0 ? "nested on redis ran" : "nested ran unlocked";
        }

    }

    public static class OnZooKeeper {

        @DistributedLock(key = "'job'", backend = "zookeeper")
        public void run() {
        }

    }

}
