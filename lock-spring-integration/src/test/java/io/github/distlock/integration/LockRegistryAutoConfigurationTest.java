package io.github.distlock.integration;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.locks.Lock;

import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.memory.InMemoryLockBackend;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * When the Spring Integration registry is declared, one test per condition. The lock
 * service runs on the in-memory backend here: these tests are about the conditions (the
 * registry's behaviour is tested on real Redis).
 */
class LockRegistryAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(
                AutoConfigurations.of(DistributedLockAutoConfiguration.class, LockRegistryAutoConfiguration.class))
        .withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "io.lettuce",
                "io.github.distlock.redis.", "io.github.distlock.redlock."))
        .withBean(InMemoryLockBackend.class, InMemoryLockBackend::new);

    @Test
    void aLockServiceAndSpringIntegrationOnTheClassPathGiveARegistryOnTheLockService() {
        this.runner.run((context) -> {
            assertThat(context).hasSingleBean(LockRegistry.class);
            assertThat(context.getBean(LockRegistry.class)).isInstanceOf(LockServiceLockRegistry.class);
            Lock lock = context.getBean(LockRegistry.class).obtain("orders");
            lock.lock();
            try {
                assertThat(context.getBean(InMemoryLockBackend.class).heldLocks()).containsExactly("orders");
            }
            finally {
                lock.unlock();
            }
            assertThat(context.getBean(InMemoryLockBackend.class).heldLocks()).isEmpty();
        });
    }

    @Test
    void theLeaseIsTheDefaultTtl() {
        this.runner.withPropertyValues("distributed-lock.default-ttl=7s")
            .run((context) -> assertThat(context.getBean(LockServiceLockRegistry.class)).extracting("ttl")
                .hasToString("PT7S"));
    }

    @Test
    void anApplicationsOwnRegistryIsKept() {
        DefaultLockRegistry own = new DefaultLockRegistry();
        this.runner.withBean(LockRegistry.class, () -> own)
            .run((context) -> assertThat(context.getBean(LockRegistry.class)).isSameAs(own));
    }

    @Test
    void withoutSpringIntegrationNoRegistryIsDeclared() {
        this.runner
            .withClassLoader(
                    new FilteredClassLoader("org.springframework.integration", "org.springframework.data.redis",
                            "io.lettuce", "io.github.distlock.redis.", "io.github.distlock.redlock."))
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(context).doesNotHaveBean(LockServiceLockRegistry.class);
            });
    }

    @Test
    void withTheLockServiceSwitchedOffNoRegistryIsDeclared() {
        this.runner.withPropertyValues("distributed-lock.enabled=false").run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(LockServiceLockRegistry.class);
        });
    }

}
