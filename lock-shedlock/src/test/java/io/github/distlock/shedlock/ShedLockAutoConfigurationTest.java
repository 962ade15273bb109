package io.github.distlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.memory.InMemoryLockBackend;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * When the ShedLock provider is declared, one test per condition. The lock service runs
 * on the in-memory backend here: these tests are about the conditions, not the store (the
 * suites run on real Redis).
 */
class ShedLockAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(
                AutoConfigurations.of(DistributedLockAutoConfiguration.class, ShedLockAutoConfiguration.class))
        .withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "io.lettuce",
                "io.github.distlock.redis.", "io.github.distlock.redlock."))
        .withBean(InMemoryLockBackend.class, InMemoryLockBackend::new);

    @Test
    void aLockServiceAndShedLockOnTheClassPathGiveAProviderOnTheLockService() {
        this.runner.run((context) -> {
            assertThat(context).hasSingleBean(LockProvider.class);
            LockProvider provider = context.getBean(LockProvider.class);
            assertThat(provider).isInstanceOf(LockServiceLockProvider.class);

            LockConfiguration job = new LockConfiguration(Instant.now(), "nightly", Duration.ofMinutes(1),
                    Duration.ZERO);
            Optional<SimpleLock> held = provider.lock(job);
            assertThat(held).isPresent();
            assertThat(context.getBean(InMemoryLockBackend.class).heldLocks()).containsExactly("nightly");
            assertThat(provider.lock(job)).as("the second instance of the job is skipped").isEmpty();
            held.get().unlock();
            assertThat(context.getBean(InMemoryLockBackend.class).heldLocks()).isEmpty();
        });
    }

    @Test
    void anApplicationsOwnProviderIsKept() {
        LockProvider own = (configuration) -> Optional.empty();
        this.runner.withBean(LockProvider.class, () -> own)
            .run((context) -> assertThat(context.getBean(LockProvider.class)).isSameAs(own));
    }

    @Test
    void withoutShedLockNoProviderIsDeclared() {
        this.runner
            .withClassLoader(new FilteredClassLoader("net.javacrumbs.shedlock", "org.springframework.data.redis",
                    "io.lettuce", "io.github.distlock.redis.", "io.github.distlock.redlock."))
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(context).doesNotHaveBean(LockServiceLockProvider.class);
            });
    }

    @Test
    void withTheLockServiceSwitchedOffNoProviderIsDeclared() {
        this.runner.withPropertyValues("distributed-lock.enabled=false").run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(LockProvider.class);
        });
    }

}
