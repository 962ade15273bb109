package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.DistributedLock;
import io.github.distlock.DistributedLock.LeaseLostAction;
import io.github.distlock.LockLostEvent;
import io.github.distlock.LockLostException;
import io.github.distlock.aop.LockTestContexts.LockProbe;
import io.github.distlock.aop.LockTestContexts.LostLeases;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * Real lost leases, with a 300 ms ttl renewed by the watchdog: the key deleted behind the
 * holder's back, or Redis stopped for longer than the ttl, while the method runs. The
 * loss reaches an {@code @EventListener}, the call fails with {@link LockLostException}
 * after the method returned (unless switched off), and {@code INTERRUPT} interrupts the
 * method, but only while it runs.
 */
class DistributedLockLeaseLostTest {

    private static final Duration LOSS_NOTICED = Duration.ofSeconds(5);

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    @AfterEach
    void clearInterruptOfAFailedTest() {
        Thread.interrupted();
    }

    private ApplicationContextRunner runner() {
        // A short operation timeout lets a stopped Redis cost the watchdog one lease, not
        // several.
        return LockTestContexts.runner(redis.server())
            .withPropertyValues("distributed-lock.operation-timeout=300ms")
            .withBean(LostLeases.class)
            .withBean(LeaseService.class);
    }

    @Test
    void ignoredLossLetsTheMethodFinishThenFailsTheCallNamingMethodAndKey() {
        runner().run(context -> {
            LeaseService service = context.getBean(LeaseService.class);

            assertThatThrownBy(service::finishAfterKeyDeleted).isInstanceOf(LockLostException.class)
                .hasMessageContaining("'deleted'")
                .hasMessageContaining("LeaseService.finishAfterKeyDeleted()")
                .hasMessageContaining("lost")
                .satisfies(ex -> assertThat(((LockLostException) ex).getKey()).isEqualTo("deleted"));

            assertThat(service.finished()).as("the method ran to its end").isTrue();
        });
    }

    @Test
    void lostLeaseIsPublishedToAnEventListenerWhileTheMethodRuns() {
        runner().run(context -> {
            LeaseService service = context.getBean(LeaseService.class);
            catchThrowable(service::finishAfterKeyDeleted);

            // The method itself waited for the event, so it arrived while the method ran.
            assertThat(context.getBean(LostLeases.class).events()).singleElement().satisfies(event -> {
                assertThat(event.getKey()).isEqualTo("deleted");
                assertThat(event.getReason()).contains("gone");
                assertThat(event.getHandle().isLost()).isTrue();
            });
        });
    }

    @Test
    void withThrowOnLeaseLostOffTheResultStandsAndOnlyTheEventTells() {
        runner().withPropertyValues("distributed-lock.throw-on-lease-lost=false").run(context -> {
            LeaseService service = context.getBean(LeaseService.class);

            assertThat(service.finishAfterKeyDeleted()).isEqualTo("finished");

            assertThat(context.getBean(LostLeases.class).lost("deleted")).isTrue();
        });
    }

    @Test
    void methodsOwnExceptionPropagatesWithTheLossAttachedAsSuppressed() {
        runner().run(context -> {
            LeaseService service = context.getBean(LeaseService.class);
            IllegalStateException failure = new IllegalStateException("the method's own failure");

            Throwable thrown = catchThrowable(() -> service.throwAfterKeyDeleted(failure));

            assertThat(thrown).isSameAs(failure);
            assertThat(thrown.getSuppressed()).singleElement()
                .isInstanceOf(LockLostException.class)
                .satisfies(lost -> assertThat(lost.getMessage()).contains("'thrown'", "throwAfterKeyDeleted("));
        });
    }

    @Test
    void interruptStopsABlockedMethodAndTheCallThenFailsWithLockLostException() {
        runner().run(context -> {
            LeaseService service = context.getBean(LeaseService.class);
            long started = System.nanoTime();

            assertThatThrownBy(service::blockUntilInterrupted).isInstanceOf(LockLostException.class)
                .hasMessageContaining("'blocked'");

            assertThat(service.interrupted()).as("the method's wait was interrupted").isTrue();
            // It would otherwise have blocked for 10 s.
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(LOSS_NOTICED);
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        });
    }

    @Test
    void interruptStatusCausedByTheLossIsClearedOnceTheMethodReturned() {
        runner().run(context -> {
            LeaseService service = context.getBean(LeaseService.class);

            assertThatThrownBy(service::spinUntilLost).isInstanceOf(LockLostException.class);

            assertThat(service.interrupted()).as("interrupt status inside the method").isTrue();
            assertThat(Thread.interrupted()).as("interrupt status after the call").isFalse();
        });
    }

    @Test
    void aFinishedInterruptingCallCannotInterruptItsThreadWhenTheLeaseIsLostLater() {
        runner().run(context -> {
            LeaseService service = context.getBean(LeaseService.class);

            // The outer call (IGNORE) runs an INTERRUPT call on the same key, which joins
            // its hold and returns;
            // only then is the key deleted.
            assertThatThrownBy(service::outerLosingTheLeaseAfterAnInterruptingInnerCall)
                .isInstanceOf(LockLostException.class);

            assertThat(context.getBean(LostLeases.class).lost("joined")).isTrue();
            assertThat(service.interrupted()).as("outer thread interrupted after the inner call returned").isFalse();
        });
    }

    @Test
    void redisStoppedForLongerThanTheTtlLosesTheLeaseAndFailsTheCall() {
        runner().run(context -> {
            LeaseService service = context.getBean(LeaseService.class);

            assertThatThrownBy(service::finishAfterRedisOutage).isInstanceOf(LockLostException.class)
                .hasMessageContaining("'outage'")
                .hasMessageContaining("finishAfterRedisOutage(");

            assertThat(service.finished()).isTrue();
            assertThat(context.getBean(LostLeases.class).events()).singleElement()
                .extracting(LockLostEvent::getReason)
                .asString()
                .contains("could not be reached");
        });
    }

    static class LeaseService {

        private final LockProbe probe;

        private final LostLeases lostLeases;

        private final ObjectProvider<LeaseService> self;

        private volatile boolean finished;

        private volatile boolean interrupted;

        LeaseService(LockProbe probe, LostLeases lostLeases, ObjectProvider<LeaseService> self) {
            this.probe = probe;
            this.lostLeases = lostLeases;
            this.self = self;
        }

        public boolean finished() {
            return finished;
        }

        public boolean interrupted() {
            return interrupted;
        }

        @DistributedLock(key = "'deleted'", ttl = "300ms")
        public String finishAfterKeyDeleted() {
            loseByDeletion("deleted");
            finished = true;
            return "finished";
        }

        @DistributedLock(key = "'thrown'", ttl = "300ms")
        public void throwAfterKeyDeleted(RuntimeException failure) {
            loseByDeletion("thrown");
            throw failure;
        }

        @DistributedLock(key = "'blocked'", ttl = "300ms", onLeaseLost = LeaseLostAction.INTERRUPT)
        public void blockUntilInterrupted() {
            probe.server().del("lock:{blocked}");
            try {
                new CountDownLatch(1).await(10, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                interrupted = true;
            }
        }

        /**
         * Never blocks, so the interrupt stays pending as a status the aspect has to
         * clear.
         */
        @DistributedLock(key = "'spinning'", ttl = "300ms", onLeaseLost = LeaseLostAction.INTERRUPT)
        public void spinUntilLost() {
            probe.server().del("lock:{spinning}");
            long deadline = System.nanoTime() + LOSS_NOTICED.toNanos();
            while (!Thread.currentThread().isInterrupted() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            interrupted = Thread.currentThread().isInterrupted();
        }

        @DistributedLock(key = "'joined'", ttl = "300ms")
        public void outerLosingTheLeaseAfterAnInterruptingInnerCall() {
            self.getObject().interruptibleInner();
            probe.server().del("lock:{joined}");
            long deadline = System.nanoTime() + LOSS_NOTICED.toNanos();
            while (!lostLeases.lost("joined") && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            // The watchdog runs the handle's listeners before it publishes the event: any
            // interrupt came first.
            interrupted = Thread.currentThread().isInterrupted();
        }

        @DistributedLock(key = "'joined'", ttl = "300ms", waitTime = "0s", onLeaseLost = LeaseLostAction.INTERRUPT)
        public void interruptibleInner() {
        }

        @DistributedLock(key = "'outage'", ttl = "300ms")
        public void finishAfterRedisOutage() {
            probe.server().stop();
            await().atMost(LOSS_NOTICED).until(() -> lostLeases.lost("outage"));
            probe.server().restart();
            finished = true;
        }

        private void loseByDeletion(String key) {
            probe.server().del("lock:{" + key + "}");
            await().atMost(LOSS_NOTICED).until(() -> lostLeases.lost(key));
        }

    }

}
