package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.DistributedLock;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.core.NamedLockBackend;
import io.github.distlock.core.RoutingLockService;
import io.github.distlock.memory.InMemoryLockBackend;

/**
 * An application whose only stores are named backends (an etcd or ZooKeeper module's,
 * here in-memory stores standing in for them) and no Redis: Spring Data Redis and
 * lock-redis are not on the class path.
 */
class NamedBackendsOnlyTest {

    private final InMemoryLockBackend first = new InMemoryLockBackend();

    private final InMemoryLockBackend second = new InMemoryLockBackend();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                DistributedLockAnnotationAutoConfiguration.class))
        .withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "io.lettuce",
                "io.github.distlock.redis.", "io.github.distlock.redlock."))
        .withBean("firstBackend", NamedLockBackend.class, () -> new NamedLockBackend("first", first));

    @Test
    void theOnlyNamedBackendIsTheDefaultForTheLockServiceAndTheAnnotation() {
        runner.withBean(Job.class, ReportJob::new).run(context -> {
            assertThat(context).hasNotFailed();
            LockService locks = context.getBean(LockService.class);
            assertThat(((RoutingLockService) locks).defaultBackend()).isEqualTo("first");

            try (LockHandle held = locks.lock(LockRequest.of("report"))) {
                assertThat(first.heldLocks()).containsExactly("report");
                assertThat(context.getBean(Job.class).run()).as("busy: skipped").isZero();
            }
            assertThat(context.getBean(Job.class).run()).isEqualTo(1);
        });
    }

    @Test
    void severalNamedBackendsNeedDistributedLockBackendToNameTheDefault() {
        runner.withBean("secondBackend", NamedLockBackend.class, () -> new NamedLockBackend("second", second))
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).hasStackTraceContaining("[first, second]")
                    .hasStackTraceContaining("distributed-lock.backend");
            });
    }

    @Test
    void distributedLockBackendNamesTheDefaultAmongSeveral() {
        runner.withBean("secondBackend", NamedLockBackend.class, () -> new NamedLockBackend("second", second))
            .withPropertyValues("distributed-lock.backend=second")
            .run(context -> {
                assertThat(context).hasNotFailed();
                LockService locks = context.getBean(LockService.class);
                try (LockHandle held = locks.lock(LockRequest.of("report"))) {
                    assertThat(second.heldLocks()).containsExactly("report");
                    assertThat(first.heldLocks()).isEmpty();
                }
            });
    }

    /**
     * Public, and an interface: the proxy is then a JDK one, which the filtering class
     * loader allows.
     */
    public interface Job {

        int run();

    }

    public static class ReportJob implements Job {

        private int runs;

        @Override
        @DistributedLock(key = "'report'", waitTime = "0s", onBusy = DistributedLock.FailureAction.SKIP)
        public int run() {
            return ++runs;
        }

    }

}
