package io.github.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.core.NamedLockBackend;
import io.github.distlock.memory.InMemoryLockBackend;
import io.github.distlock.testsupport.EtcdTestCluster;

/**
 * When {@link EtcdLockAutoConfiguration} declares the backend named {@code etcd}: with
 * {@code distributed-lock.etcd.endpoints} set (against a real cluster), not without it,
 * not over an application's own, never with a bad endpoint; and, with the starter's
 * auto-configuration, a lock that names {@code etcd} is taken in etcd while the others
 * stay on the primary store.
 */
class EtcdLockAutoConfigurationTest {

    private static EtcdTestCluster etcd;

    private final ApplicationContextRunner contexts = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(EtcdLockAutoConfiguration.class));

    @BeforeAll
    static void start() {
        etcd = EtcdTestCluster.start(1);
    }

    @AfterAll
    static void stop() {
        if (etcd != null) {
            etcd.close();
        }
    }

    private String endpoints() {
        return "distributed-lock.etcd.endpoints=" + String.join(",", etcd.endpoints());
    }

    @Test
    void withoutEndpointsThereIsNoEtcdBackend() {
        contexts.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(NamedLockBackend.class));
    }

    @Test
    void withEndpointsTheBackendIsNamedEtcdConnectedAndClosedWithTheContext() {
        EtcdLockBackend[] created = new EtcdLockBackend[1];
        contexts.withPropertyValues(endpoints(), "distributed-lock.etcd.key-prefix=app/").run(context -> {
            NamedLockBackend named = context.getBean(NamedLockBackend.class);
            assertThat(named.name()).isEqualTo("etcd");
            created[0] = (EtcdLockBackend) named.backend();
            assertThat(created[0].ping().reachable()).isTrue();
            assertThat(created[0].lockKey("order:42").storeKey()).isEqualTo("app/lock/order:42/");
        });
        assertThat(created[0].startDelivery(created[0].lockKey("order:42"))).as("closed with the context").isFalse();
    }

    @Test
    void anApplicationsOwnEtcdBackendBeanWins() {
        NamedLockBackend own = new NamedLockBackend("etcd", new InMemoryLockBackend());
        contexts.withBean("etcdLockBackend", NamedLockBackend.class, () -> own)
            .withPropertyValues("distributed-lock.etcd.endpoints=http://127.0.0.1:2379")
            .run(context -> assertThat(context).hasNotFailed().getBean(NamedLockBackend.class).isSameAs(own));
    }

    @Test
    void withTheStarterALockNamingEtcdIsTakenInEtcdAndTheOthersStayOnThePrimaryStore() {
        new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(EtcdLockAutoConfiguration.class, DistributedLockAutoConfiguration.class))
            .withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "io.lettuce",
                    "io.github.distlock.redis.", "io.github.distlock.redlock."))
            .withBean(InMemoryLockBackend.class, InMemoryLockBackend::new)
            .withPropertyValues(endpoints())
            .run(context -> {
                assertThat(context).hasNotFailed();
                LockService locks = context.getBean(LockService.class);
                InMemoryLockBackend primary = context.getBean(InMemoryLockBackend.class);
                EtcdLockBackend inEtcd = (EtcdLockBackend) context.getBean(NamedLockBackend.class).backend();
                try (LockHandle critical = locks
                    .lock(LockRequest.of("ledger:7").withBackend("etcd").withWaitTime(Duration.ZERO));
                        LockHandle ordinary = locks.lock(LockRequest.of("cache:7").withWaitTime(Duration.ZERO))) {
                    assertThat(inEtcd.inspect(inEtcd.lockKey("ledger:7")).held()).isTrue();
                    assertThat(critical.fencingToken()).as("etcd's create revision").isPositive();
                    assertThat(primary.heldLocks()).containsExactly("cache:7");
                }
                assertThat(inEtcd.inspect(inEtcd.lockKey("ledger:7")).held()).isFalse();
            });
    }

    @Test
    void aMalformedEndpointFailsTheStartupNamingThePropertyAndTheFix() {
        contexts.withPropertyValues("distributed-lock.etcd.endpoints=etcd-1:2379")
            .run(context -> assertThat(context).hasFailed()
                .getFailure()
                .rootCause()
                .hasMessageContaining("distributed-lock.etcd.endpoints has 'etcd-1:2379'")
                .hasMessageContaining("e.g. http://etcd-1:2379"));
    }

}
