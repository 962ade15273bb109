package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.distlock.DistributedLock;
import io.github.distlock.InvalidLockKeyException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockLostEvent;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.aop.LockTestContexts.LockProbe;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockContext;
import io.github.distlock.core.LockListener;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * What a call of a {@code @DistributedLock} method does: the method runs only under the
 * lock, its outcome passes through unchanged, and the lock is released whatever happens,
 * with warnings where the release cannot do its job.
 */
class DistributedLockInvocationTest {

    /**
     * Restarts a server a test stopped, so each test starts against a running, empty
     * Redis.
     */
    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private final ListAppender<ILoggingEvent> warnings = new ListAppender<>();

    private final Logger aspectLogger = (Logger) LoggerFactory.getLogger(DistributedLockAspectSupport.class);

    private final ListAppender<ILoggingEvent> lostLeaseWarnings = new ListAppender<>();

    private final Logger lostLeaseLogger = (Logger) LoggerFactory.getLogger(LeaseWatchdog.class);

    @BeforeEach
    void captureWarnings() {
        warnings.start();
        aspectLogger.addAppender(warnings);
        lostLeaseWarnings.start();
        lostLeaseLogger.addAppender(lostLeaseWarnings);
    }

    @AfterEach
    void stopCapturingWarnings() {
        aspectLogger.detachAppender(warnings);
        lostLeaseLogger.detachAppender(lostLeaseWarnings);
        redis.server().resume(); // in case a test failed while the server was paused
    }

    private ApplicationContextRunner runner() {
        // A client timeout of a minute: only distributed-lock.operation-timeout can make
        // a call fail fast.
        return LockTestContexts.runner(redis.server())
            .withPropertyValues("distributed-lock.operation-timeout=500ms", "spring.data.redis.timeout=60s")
            .withBean(OrderService.class);
    }

    @Test
    void listenersSeeTheDeclaredNameOrClassDotMethodNeverTheKeyAsTheLocksName() {
        List<String> names = new java.util.concurrent.CopyOnWriteArrayList<>();
        LockListener recorder = new LockListener() {
            @Override
            public void acquired(LockContext lock) {
                names.add(lock.name() + " " + lock.key());
            }
        };
        // Nothing here is about timeouts: a generous one, so a loaded machine's slow
        // first connect passes.
        runner().withPropertyValues("distributed-lock.operation-timeout=10s")
            .withBean(LockListener.class, () -> recorder)
            .run(context -> {
                OrderService service = context.getBean(OrderService.class);
                service.process("o-1");
                service.export();
                assertThat(names).containsExactly("OrderService.process o-1", "invoice-export nightly");
            });
    }

    @Test
    void nullKeyFailsTheCallNamingMethodAndExpressionWithoutInvokingTheMethod() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            assertThatThrownBy(() -> service.process(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("OrderService.process(String orderId)")
                .hasMessageContaining("\"#orderId\"")
                .hasMessageContaining("null");
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void blankKeyFailsTheCallWithoutInvokingTheMethod() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            assertThatThrownBy(() -> service.process("  ")).isInstanceOf(IllegalArgumentException.class)
                .isInstanceOfSatisfying(InvalidLockKeyException.class,
                        ex -> assertThat(ex.getReason()).isEqualTo(InvalidLockKeyException.Reason.BLANK))
                .hasMessageContaining("process(")
                .hasMessageContaining("a blank string, '  '");
            assertThatThrownBy(() -> service.process(null)).isInstanceOf(InvalidLockKeyException.class);
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void aKeyLongerThanTheMaximumFailsTheCallNamingMethodExpressionAndPropertyWithoutInvokingTheMethod() {
        runner().withPropertyValues("distributed-lock.max-key-length=60").run(context -> {
            OrderService service = context.getBean(OrderService.class);
            String orderId = "o".repeat(61);

            assertThatThrownBy(() -> service.process(orderId)).isInstanceOf(IllegalArgumentException.class)
                .isInstanceOfSatisfying(InvalidLockKeyException.class, ex -> {
                    assertThat(ex.getReason()).isEqualTo(InvalidLockKeyException.Reason.TOO_LONG);
                    assertThat(ex.getKeyLength()).isEqualTo(61);
                    assertThat(ex.getMaxKeyLength()).isEqualTo(60);
                })
                .hasMessageStartingWith("@DistributedLock key \"#orderId\" of ")
                .hasMessageContaining("OrderService.process(String orderId) evaluated to a key 61 characters "
                        + "long, longer than distributed-lock.max-key-length (60): '" + "o".repeat(50)
                        + "'... (its first 50 characters). The method was not invoked.")
                .hasMessageContaining("or raise distributed-lock.max-key-length")
                .message()
                .doesNotContain("o".repeat(51));
            assertThat(service.invocations()).isZero();
            assertThat(redis.server().scan("lock:*")).isEmpty();

            assertThat(service.process("o".repeat(60))).isEqualTo("processed " + "o".repeat(60));
            assertThat(service.locksSeen()).containsExactly("lock:{" + "o".repeat(60) + "}");
        });
    }

    @Test
    void keyPathThroughANullPropertyFailsTheCallWithoutInvokingTheMethod() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            assertThatThrownBy(() -> service.byCustomer(new Order(null))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("byCustomer(")
                .hasMessageContaining("#order.customer.id");
            assertThat(service.invocations()).isZero();
        });
    }

    @Test
    void lockHeldByAnotherOwnerTimesOutWithoutInvokingTheMethod() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            LockHandle other = context.getBean(LockService.class)
                .lock(LockRequest.of("busy").withTtl(Duration.ofSeconds(10)).withWaitTime(Duration.ZERO));
            try {
                assertThatThrownBy(service::busy).isInstanceOf(LockTimeoutException.class)
                    .satisfies(ex -> assertThat(((LockTimeoutException) ex).getKey()).isEqualTo("busy"));
                assertThat(service.invocations()).isZero();
            }
            finally {
                other.release();
            }
            service.busy();
            assertThat(service.invocations()).isOne();
        });
    }

    @Test
    void stoppedRedisFailsTheCallWithLockBackendExceptionWithinTheOperationTimeout() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            service.process("warm-up"); // connect first, as a running application has
            redis.server().stop();

            long started = System.nanoTime();
            assertThatThrownBy(service::backend).isInstanceOf(LockBackendException.class);
            // The client would wait 60 s; 20 s leave room for a stalled machine, not for
            // the client timeout.
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
            assertThat(service.invocations()).isOne(); // only the warm-up
        });
    }

    @Test
    void hungRedisFailsTheCallWithLockBackendExceptionWithinTheOperationTimeout() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            service.process("warm-up");
            redis.server().pause();
            try {
                long started = System.nanoTime();
                assertThatThrownBy(service::backend).isInstanceOf(LockBackendException.class);
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
                assertThat(service.invocations()).isOne();
            }
            finally {
                redis.server().resume();
            }
        });
    }

    @Test
    void methodExceptionPropagatesUnchangedAndTheLockIsReleased() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            IllegalStateException failure = new IllegalStateException("payment declined");

            assertThat(catchThrowable(() -> service.fail(failure))).isSameAs(failure);
            assertThat(service.locksSeen()).containsExactly("lock:{failing}");
            assertThat(context.getBean(LockProbe.class).exists("lock:{failing}")).isFalse();
        });
    }

    @Test
    void checkedMethodExceptionPropagatesUnchangedAndTheLockIsReleased() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            IOException failure = new IOException("disk full");

            assertThat(catchThrowable(() -> service.failChecked(failure))).isSameAs(failure);
            assertThat(context.getBean(LockProbe.class).exists("lock:{checked}")).isFalse();
        });
    }

    @Test
    void returnValuePassesThroughAndTheLockIsReleased() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            assertThat(service.process("o-1")).isEqualTo("processed o-1");
            assertThat(service.locksSeen()).containsExactly("lock:{o-1}");
            assertThat(context.getBean(LockProbe.class).exists("lock:{o-1}")).isFalse();
            assertThat(warnings.list).isEmpty();
        });
    }

    @Test
    void fixedLeaseThatExpiresWhileTheMethodRunsFailsTheCallWithLockLostExceptionAfterTheMethodReturns() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            assertThatThrownBy(service::outliveFixedLease).isInstanceOf(LockLostException.class)
                .hasMessageContaining("'short-lease'")
                .hasMessageContaining("outliveFixedLease(")
                .hasMessageContaining("expired")
                .satisfies(ex -> assertThat(((LockLostException) ex).getKey()).isEqualTo("short-lease"));
            assertThat(service.invocations()).isOne(); // the method did run to its end
        });
    }

    @Test
    void fixedLeaseThatExpiresIsReportedLostAsAnyLostLeaseAndTheResultStandsWhenThrowOnLeaseLostIsOff() {
        List<LockLostEvent> lost = new CopyOnWriteArrayList<>();
        ApplicationListener<ApplicationEvent> lostLeases = (event) -> {
            if (event instanceof LockLostEvent lockLost) {
                lost.add(lockLost);
            }
        };
        runner().withPropertyValues("distributed-lock.throw-on-lease-lost=false")
            .withBean("lostLeases", ApplicationListener.class, () -> lostLeases)
            .run(context -> {
                OrderService service = context.getBean(OrderService.class);
                assertThat(service.outliveFixedLease()).isEqualTo("finished");
                // Published when the lease ran out, while the method still ran (it waits
                // for the key to go, which happens after that).
                assertThat(lost).singleElement().satisfies(event -> {
                    assertThat(event.getHandle().key()).isEqualTo("short-lease");
                    assertThat(event.getReason()).contains("fixed lease of 300 ms");
                });
                assertThat(lostLeaseWarnings.list).singleElement().satisfies(event -> {
                    assertThat(event.getLevel()).hasToString("WARN");
                    assertThat(event.getFormattedMessage()).contains("'short-lease'", "fixed lease of 300 ms");
                });
                assertThat(warnings.list).as("no second WARN from the aspect").isEmpty();
            });
    }

    @Test
    void enabledWatchdogRenewsTheLeaseEvenWhenRenewalIsOffByDefault() {
        runner().withPropertyValues("distributed-lock.watchdog.enabled=false").run(context -> {
            OrderService service = context.getBean(OrderService.class);
            assertThat(service.outliveRenewedLease()).isTrue();
            assertThat(warnings.list).isEmpty();
        });
    }

    @Test
    void failedReleaseIsLoggedAndDoesNotMaskTheResult() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            assertThat(service.stopRedisThenReturn()).isEqualTo("done");
            assertThat(warnings.list).singleElement().satisfies(event -> {
                assertThat(event.getLevel()).hasToString("WARN");
                assertThat(event.getFormattedMessage()).contains("'outage'", "stopRedisThenReturn(");
            });
        });
    }

    @Test
    void failedReleaseDoesNotMaskTheMethodsException() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            IllegalStateException failure = new IllegalStateException("original");

            assertThat(catchThrowable(() -> service.stopRedisThenThrow(failure))).isSameAs(failure);
            assertThat(warnings.list).singleElement()
                .satisfies(event -> assertThat(event.getFormattedMessage()).contains("stopRedisThenThrow("));
        });
    }

    record Customer(String id) {
    }

    record Order(Customer customer) {
    }

    static class OrderService {

        private final LockProbe probe;

        private final AtomicInteger invocations = new AtomicInteger();

        private volatile List<String> locksSeen;

        OrderService(LockProbe probe) {
            this.probe = probe;
        }

        public int invocations() {
            return invocations.get();
        }

        public List<String> locksSeen() {
            return locksSeen;
        }

        @DistributedLock(key = "#orderId")
        public String process(String orderId) {
            invocations.incrementAndGet();
            locksSeen = probe.heldLocks();
            return "processed " + orderId;
        }

        @DistributedLock(key = "'nightly'", name = "invoice-export")
        public void export() {
            invocations.incrementAndGet();
        }

        @DistributedLock(key = "#order.customer.id")
        public void byCustomer(Order order) {
            invocations.incrementAndGet();
        }

        @DistributedLock(key = "'busy'", waitTime = "100ms")
        public void busy() {
            invocations.incrementAndGet();
        }

        // A wait longer than the tests' bound: a call that fails within the bound did not
        // wait out the outage.
        @DistributedLock(key = "'backend'", waitTime = "30s")
        public void backend() {
            invocations.incrementAndGet();
        }

        @DistributedLock(key = "'failing'")
        public void fail(RuntimeException failure) {
            locksSeen = probe.heldLocks();
            throw failure;
        }

        @DistributedLock(key = "'checked'")
        public void failChecked(Exception failure) throws Exception {
            throw failure;
        }

        @DistributedLock(key = "'short-lease'", ttl = "300ms", watchdog = DistributedLock.Watchdog.DISABLED)
        public String outliveFixedLease() {
            invocations.incrementAndGet();
            await().atMost(Duration.ofSeconds(20)).until(() -> !probe.exists("lock:{short-lease}"));
            return "finished";
        }

        @DistributedLock(key = "'renewed'", ttl = "600ms", watchdog = DistributedLock.Watchdog.ENABLED)
        public boolean outliveRenewedLease() {
            // Held for well over two ttls: only renewal can keep the key alive that long.
            await().during(Duration.ofMillis(1500))
                .atMost(Duration.ofSeconds(20))
                .until(() -> probe.exists("lock:{renewed}"));
            return true;
        }

        @DistributedLock(key = "'outage'")
        public String stopRedisThenReturn() {
            probe.server().stop();
            return "done";
        }

        @DistributedLock(key = "'outage'")
        public void stopRedisThenThrow(RuntimeException failure) {
            probe.server().stop();
            throw failure;
        }

    }

}
