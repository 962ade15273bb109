package io.github.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.LockHandle;
import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.LockRequest;
import io.github.distlock.core.NamedLockBackend;
import io.github.distlock.memory.InMemoryLockBackend;
import io.github.distlock.testsupport.zookeeper.ZooKeeperTestEnsemble;

/**
 * {@link ZooKeeperLockAutoConfiguration} with the starter's own: the connect string turns
 * the ZooKeeper backend on, and each bad setting fails the startup naming the property.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ZooKeeperLockAutoConfigurationTest {

    private ZooKeeperTestEnsemble ensemble;

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
            AutoConfigurations.of(ZooKeeperLockAutoConfiguration.class, DistributedLockAutoConfiguration.class));

    @BeforeAll
    void startServer() {
        ensemble = ZooKeeperTestEnsemble.start(1);
    }

    @AfterAll
    void stopServer() {
        if (ensemble != null) {
            ensemble.close();
        }
    }

    @Test
    void withAConnectStringTheLockServiceKeepsItsLocksInZooKeeper() {
        runner.withPropertyValues("distributed-lock.zookeeper.connect-string=" + ensemble.connectString())
            .run(context -> {
                assertThat(context).hasNotFailed();
                NamedLockBackend named = context.getBean(NamedLockBackend.class);
                assertThat(named.name()).isEqualTo("zookeeper");
                // The only store, so the default one: the lock names no backend.
                ZooKeeperLockBackend backend = (ZooKeeperLockBackend) named.backend();
                try (LockHandle held = context.getBean(LockService.class)
                    .lock("auto-configured", Duration.ofSeconds(10), Duration.ZERO)) {
                    assertThat(backend.inspect(backend.lockKey("auto-configured")).held()).isTrue();
                }
                assertThat(backend.inspect(backend.lockKey("auto-configured")).held()).isFalse();
            });
    }

    @Test
    void besideAPrimaryStoreALockNamingZooKeeperIsTakenInZooKeeperAndTheOthersStayOnThePrimary() {
        runner.withBean(InMemoryLockBackend.class, InMemoryLockBackend::new)
            .withPropertyValues("distributed-lock.zookeeper.connect-string=" + ensemble.connectString())
            .run(context -> {
                assertThat(context).hasNotFailed();
                LockService locks = context.getBean(LockService.class);
                InMemoryLockBackend primary = context.getBean(InMemoryLockBackend.class);
                ZooKeeperLockBackend zookeeper = (ZooKeeperLockBackend) context.getBean(NamedLockBackend.class)
                    .backend();
                try (LockHandle critical = locks.lock(LockRequest.of("ledger:9")
                    .withBackend("zookeeper")
                    .withTtl(Duration.ofSeconds(10))
                    .withWaitTime(Duration.ZERO));
                        LockHandle ordinary = locks.lock(LockRequest.of("cache:9").withWaitTime(Duration.ZERO))) {
                    assertThat(zookeeper.inspect(zookeeper.lockKey("ledger:9")).held()).isTrue();
                    assertThat(critical.fencingToken()).as("the holder node's czxid").isPositive();
                    assertThat(primary.heldLocks()).containsExactly("cache:9");
                }
                assertThat(zookeeper.inspect(zookeeper.lockKey("ledger:9")).held()).isFalse();
            });
    }

    @Test
    void withoutAConnectStringNoZooKeeperBackendIsBuilt() {
        runner.run(context -> assertThat(context).doesNotHaveBean(NamedLockBackend.class));
    }

    @Test
    void aDefaultTtlLongerThanTheSessionFailsTheStartupNamingBothProperties() {
        runner
            .withPropertyValues("distributed-lock.zookeeper.connect-string=" + ensemble.connectString(),
                    "distributed-lock.zookeeper.session-timeout=20s", "distributed-lock.default-ttl=30s")
            .run(context -> assertThat(context).getFailure()
                .rootCause()
                .hasMessageContaining("distributed-lock.default-ttl (PT30S) is longer than "
                        + "distributed-lock.zookeeper.session-timeout (PT20S)"));
    }

    @Test
    void aMisspelledZooKeeperPropertyFailsTheStartupSuggestingTheRightName() {
        runner.withPropertyValues("distributed-lock.zookeeper.conect-string=" + ensemble.connectString())
            .run(context -> assertThat(context).getFailure()
                .rootCause()
                .hasMessageContaining("distributed-lock.zookeeper.conect-string")
                .hasMessageContaining("Did you mean distributed-lock.zookeeper.connect-string"));
    }

    @Test
    void anEnsembleNobodyAnswersAtFailsTheStartupNamingTheConnectString() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            port = socket.getLocalPort();
        }
        runner
            .withPropertyValues("distributed-lock.zookeeper.connect-string=127.0.0.1:" + port,
                    "distributed-lock.zookeeper.connection-timeout=1s")
            .run(context -> assertThat(context).getFailure()
                .rootCause()
                .hasMessageContaining("distributed-lock.zookeeper.connect-string")
                .hasMessageContaining("127.0.0.1:" + port));
    }

    @Test
    void aMalformedConnectStringFailsTheStartupNamingTheProperty() {
        runner.withPropertyValues("distributed-lock.zookeeper.connect-string=zk1")
            .run(context -> assertThat(context).getFailure()
                .rootCause()
                .hasMessageContaining("distributed-lock.zookeeper.connect-string 'zk1' has a member without a port"));
    }

}
