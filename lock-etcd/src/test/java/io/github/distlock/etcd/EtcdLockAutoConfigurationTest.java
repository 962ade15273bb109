package io.github.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.core.LockBackend;
import io.github.distlock.memory.InMemoryLockBackend;
import io.github.distlock.testsupport.EtcdTestCluster;

/**
 * When {@link EtcdLockAutoConfiguration} creates the etcd backend: with
 * {@code distributed-lock.etcd.endpoints} set (against a real cluster), not without it,
 * not over an application's own backend, and never with a bad endpoint.
 */
class EtcdLockAutoConfigurationTest {

    private final ApplicationContextRunner contexts = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(EtcdLockAutoConfiguration.class));

    @Test
    void withoutEndpointsThereIsNoEtcdBackend() {
        contexts.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(EtcdLockBackend.class));
    }

    @Test
    void withEndpointsTheBackendIsConnectedAndClosedWithTheContext() {
        try (EtcdTestCluster etcd = EtcdTestCluster.start(1)) {
            EtcdLockBackend[] created = new EtcdLockBackend[1];
            contexts
                .withPropertyValues("distributed-lock.etcd.endpoints=" + String.join(",", etcd.endpoints()),
                        "distributed-lock.etcd.key-prefix=app/")
                .run(context -> {
                    assertThat(context).hasSingleBean(EtcdLockBackend.class);
                    created[0] = context.getBean(EtcdLockBackend.class);
                    assertThat(created[0].ping().reachable()).isTrue();
                    assertThat(created[0].lockKey("order:42").storeKey()).isEqualTo("app/lock/order:42/");
                });
            assertThat(created[0].startDelivery(created[0].lockKey("order:42"))).as("closed with the context")
                .isFalse();
        }
    }

    @Test
    void anApplicationsOwnBackendWins() {
        contexts.withUserConfiguration(OwnBackend.class)
            .withPropertyValues("distributed-lock.etcd.endpoints=http://127.0.0.1:2379")
            .run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(EtcdLockBackend.class)
                .hasSingleBean(LockBackend.class));
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

    @Configuration(proxyBeanMethods = false)
    static class OwnBackend {

        @Bean
        InMemoryLockBackend lockBackend() {
            return new InMemoryLockBackend();
        }

    }

}
