package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.LockService;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * Closing an application context after locks were used, with Redis healthy, is quiet:
 * nothing is closed twice and nothing logs a warning.
 */
@ExtendWith(OutputCaptureExtension.class)
class DistributedLockShutdownTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS, DistributedLockAutoConfiguration.class))
        .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());

    @Test
    void cleanShutdownAfterALockWasTakenWaitedForAndReleasedLogsNoWarning(CapturedOutput output) {
        runner.run(context -> {
            LockService locks = context.getBean(LockService.class);
            LockHandle held = locks.lock("order:1", Duration.ofSeconds(30), Duration.ZERO);
            // A second caller waits, which opens the release subscription, and gets the
            // lock handed over.
            CompletableFuture<Optional<LockHandle>> waiting = CompletableFuture
                .supplyAsync(() -> locks.tryLock("order:1", null, Duration.ofSeconds(20)));
            await().atMost(Duration.ofSeconds(10))
                .until(() -> redis.server().subscriberCount(LettuceLockBackend.handOverChannel("lock:")) == 1
                        && Long.valueOf(1).equals(redis.server().command("ZCARD", "lock:{order:1}:queue")));
            held.release();
            Optional<LockHandle> handedOver = waiting.get(10, TimeUnit.SECONDS);
            assertThat(handedOver).isPresent();
            assertThat(handedOver.get().release()).isTrue();
        });

        assertThat(output.getOut() + output.getErr()).doesNotContain("Connection is already closed")
            .doesNotContain(" WARN ")
            .doesNotContain(" ERROR ");
    }

    @Test
    void cleanShutdownAfterAnUncontendedLockLogsNoWarning(CapturedOutput output) {
        runner.run(context -> {
            try (LockHandle held = context.getBean(LockService.class).lock("order:2", null, Duration.ZERO)) {
                assertThat(held.isHeld()).isTrue();
            }
        });

        assertThat(output.getOut() + output.getErr()).doesNotContain("Connection is already closed")
            .doesNotContain(" WARN ")
            .doesNotContain(" ERROR ");
    }

    @Test
    void closingAChildContextClosesTheLockConnectionWhileTheParentsConnectionFactoryRunsOn(CapturedOutput output) {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS))
            .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port())
            .run(parent -> {
                long before = redis.server().connectedClients();
                new ApplicationContextRunner().withParent(parent)
                    .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
                    .run(child -> {
                        try (LockHandle held = child.getBean(LockService.class).lock("order:3", null, Duration.ZERO)) {
                            assertThat(redis.server().connectedClients()).isEqualTo(before + 1);
                        }
                    });
                // The factory still runs, so its client would not close the lock
                // connection before the parent
                // closes: closing the child must.
                await().atMost(Duration.ofSeconds(10)).until(() -> redis.server().connectedClients() == before);
            });

        assertThat(output.getOut() + output.getErr()).doesNotContain("Connection is already closed")
            .doesNotContain(" WARN ")
            .doesNotContain(" ERROR ");
    }

}
