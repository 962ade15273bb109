package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.DistributedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAnnotationAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.core.LockBackend.RenewalOutcome;
import io.github.distlock.testsupport.FaultRule;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * Interrupts injected into every public operation, either with the flag already set when
 * the call starts or arriving while the call waits for Redis (the fault proxy holds the
 * reply of the operation's command back, so the call is surely in flight). Whatever the
 * moment, the call returns, the flag is still set afterwards, and the outcome is coherent
 * as Redis itself shows it: an acquisition ends in an exception and leaves nothing in
 * Redis (no key, no queue entry a release could hand the lock to); a release, a close or
 * a fencing token runs to completion.
 */
class InterruptInjectionTest {

    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);

    /**
     * How long the reply of the interrupted command is held back: the interrupt comes
     * meanwhile.
     */
    private static final Duration REPLY_DELAY = Duration.ofMillis(300);

    private static final Duration TTL = Duration.ofSeconds(30);

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static final Duration CALL_RETURNS = Duration.ofSeconds(10);

    /** Room for an undo that Redis did not confirm at once to be retried. */
    private static final Duration UNDONE = OPERATION_TIMEOUT.plusSeconds(2);

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension();

    private static ProxiedLockServices services;

    private static final AtomicInteger keys = new AtomicInteger();

    private String key;

    private String lock;

    @BeforeAll
    static void start() {
        services = ProxiedLockServices.start(redisExtension.server(), OPERATION_TIMEOUT);
    }

    @AfterAll
    static void stop() throws Exception {
        services.close();
    }

    @BeforeEach
    void newKey() {
        key = "interrupt:" + keys.incrementAndGet();
        lock = ProxiedLockServices.redisKey(key);
    }

    @AfterEach
    void clearFaultsAndTheFlag() {
        Thread.interrupted();
        services.heal();
    }

    /** When the interrupt comes. */
    enum InterruptMoment {

        FLAG_SET_BEFORE_THE_CALL("the interrupt flag set before the call"),
        INTERRUPTED_DURING_THE_CALL("interrupted during the call");

        private final String description;

        InterruptMoment(String description) {
            this.description = description;
        }

        @Override
        public String toString() {
            return description;
        }

    }

    /**
     * What an interrupted call returned or threw, and whether its thread's flag was set
     * afterwards.
     */
    record Outcome(Object value, Throwable thrown, boolean flagSetAfterwards) {
    }

    /**
     * One interrupted operation: prepared before the call, called on a thread of its own,
     * then checked.
     */
    interface Exercise {

        Object call() throws Exception;

        /**
         * For an interrupt during the call without a command to hold back: the call waits
         * now.
         */
        default BooleanSupplier waiting() {
            return () -> true;
        }

        void verify(Outcome outcome) throws Exception;

    }

    /**
     * The public operations, each with the command whose reply is held back while it is
     * interrupted.
     */
    enum InterruptedOperation {

        TRY_LOCK_WITHOUT_WAITING("tryLock without waiting", LockCommand.BARE_ACQUIRE) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                return test.acquisition(() -> services.proxied.service.tryLock(test.key, TTL, Duration.ZERO), null);
            }
        },
        TRY_LOCK_WITHOUT_WAITING_WITH_A_FENCING_TOKEN("tryLock without waiting, with a fencing token",
                LockCommand.ACQUIRE_SCRIPT) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                return test.acquisition(
                        () -> services.proxied.service.tryLock(
                                LockRequest.of(test.key).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken()),
                        null);
            }
        },
        TRY_LOCK_WAITING_FOR_A_FREE_LOCK("tryLock with a wait, the lock free", LockCommand.BARE_ACQUIRE) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                return test.acquisition(() -> services.proxied.service.tryLock(test.key, TTL, WAIT), null);
            }
        },
        TRY_LOCK_WAITING_FOR_A_FREE_LOCK_WITH_A_FENCING_TOKEN(
                "tryLock with a wait, the lock free, with a fencing token", LockCommand.ACQUIRE_SCRIPT) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                return test.acquisition(
                        () -> services.proxied.service
                            .tryLock(LockRequest.of(test.key).withTtl(TTL).withWaitTime(WAIT).withFencingToken()),
                        null);
            }
        },
        TRY_LOCK_QUEUEING_BEHIND_A_HOLDER("tryLock queueing behind a holder, with a fencing token",
                LockCommand.ACQUIRE_SCRIPT) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                LockHandle holder = services.direct.service.lock(test.key, TTL, Duration.ZERO);
                return test.acquisition(
                        () -> services.proxied.service
                            .tryLock(LockRequest.of(test.key).withTtl(TTL).withWaitTime(WAIT).withFencingToken()),
                        holder);
            }
        },
        TRY_LOCK_WAITING_BEHIND_A_HOLDER("tryLock waiting behind a holder", null) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                LockHandle holder = services.direct.service.lock(test.key, TTL, Duration.ZERO);
                Exercise acquisition = test.acquisition(() -> services.proxied.service.tryLock(test.key, TTL, WAIT),
                        holder);
                return new Exercise() {
                    @Override
                    public Object call() throws Exception {
                        return acquisition.call();
                    }

                    @Override
                    public BooleanSupplier waiting() {
                        // Queued in Redis, and parked until a hand-over or the next poll.
                        return () -> services.queueLength(test.lock) == 1 && services.proxied.waiters.waiting() == 1;
                    }

                    @Override
                    public void verify(Outcome outcome) throws Exception {
                        acquisition.verify(outcome);
                    }
                };
            }

            @Override
            boolean happens(InterruptMoment moment) {
                return moment == InterruptMoment.INTERRUPTED_DURING_THE_CALL;
            }
        },
        LOCK_QUEUEING_BEHIND_A_HOLDER("lock queueing behind a holder", LockCommand.ACQUIRE_SCRIPT) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                LockHandle holder = services.direct.service.lock(test.key, TTL, Duration.ZERO);
                return test.acquisition(() -> services.proxied.service.lock(test.key, TTL, WAIT), holder);
            }
        },
        CALL_LOCKED_ACQUIRING("callLocked while it acquires", LockCommand.BARE_ACQUIRE) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                AtomicBoolean ran = new AtomicBoolean();
                Exercise acquisition = test.acquisition(() -> services.proxied.service
                    .callLocked(LockRequest.of(test.key).withTtl(TTL).withWaitTime(Duration.ZERO), () -> {
                        ran.set(true);
                        return "ran";
                    }), null);
                return new Exercise() {
                    @Override
                    public Object call() throws Exception {
                        return acquisition.call();
                    }

                    @Override
                    public void verify(Outcome outcome) throws Exception {
                        acquisition.verify(outcome);
                        assertThat(ran).as("the guarded action ran").isFalse();
                    }
                };
            }
        },
        CALL_LOCKED_RELEASING("callLocked while it releases after the action", LockCommand.RELEASE_SCRIPT) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                return new Exercise() {
                    @Override
                    public Object call() throws Exception {
                        return services.proxied.service.callLocked(
                                LockRequest.of(test.key).withTtl(TTL).withWaitTime(Duration.ZERO), () -> "done");
                    }

                    @Override
                    public void verify(Outcome outcome) {
                        assertThat(outcome.thrown()).isNull();
                        assertThat(outcome.value()).isEqualTo("done");
                        assertThat(services.lockValue(test.lock)).as("the lock after callLocked returned").isNull();
                    }
                };
            }

            @Override
            boolean happens(InterruptMoment moment) {
                // With the flag set before it, callLocked does not start:
                // CALL_LOCKED_ACQUIRING covers that.
                return moment == InterruptMoment.INTERRUPTED_DURING_THE_CALL;
            }
        },
        RELEASE("release", LockCommand.RELEASE_SCRIPT) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                LockHandle handle = services.proxied.service.lock(test.key, TTL, Duration.ZERO);
                return test.release(handle::release, handle, true);
            }
        },
        RELEASE_HANDING_OVER("release handing the lock over to a waiter", LockCommand.RELEASE_SCRIPT) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                LockHandle handle = services.proxied.service.lock(test.key, TTL, Duration.ZERO);
                CompletableFuture<Optional<LockHandle>> waiter = CompletableFuture
                    .supplyAsync(() -> services.direct.service.tryLock(test.key, TTL, WAIT));
                await().atMost(Duration.ofSeconds(20)).until(() -> services.queueLength(test.lock) == 1);
                return new Exercise() {
                    @Override
                    public Object call() {
                        return handle.release();
                    }

                    @Override
                    public void verify(Outcome outcome) throws Exception {
                        assertThat(outcome.thrown()).isNull();
                        assertThat(outcome.value()).isEqualTo(true);
                        LockHandle handedOver = waiter.get(CALL_RETURNS.toMillis(), TimeUnit.MILLISECONDS)
                            .orElseThrow();
                        assertThat(services.lockValue(test.lock)).isEqualTo(((DefaultLockHandle) handedOver).token());
                        assertThat(handedOver.release()).isTrue();
                    }
                };
            }
        },
        CLOSE("close", LockCommand.RELEASE_SCRIPT) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                LockHandle handle = services.proxied.service.lock(test.key, TTL, Duration.ZERO);
                return test.release(() -> {
                    handle.close();
                    return null;
                }, handle, null);
            }
        },
        FENCING_TOKEN("fencingToken on demand", LockCommand.FENCE_SCRIPT) {
            @Override
            Exercise prepare(InterruptInjectionTest test) {
                LockHandle handle = services.proxied.service.lock(test.key, TTL, Duration.ZERO);
                return new Exercise() {
                    @Override
                    public Object call() {
                        return handle.fencingToken();
                    }

                    @Override
                    public void verify(Outcome outcome) {
                        assertThat(outcome.thrown()).isNull();
                        assertThat((Long) outcome.value()).isPositive();
                        // Drawn while the lock held our token, and still held.
                        assertThat(services.redis.get(test.lock + ":fence")).isEqualTo(outcome.value().toString());
                        assertThat(handle.isHeld()).isTrue();
                        assertThat(services.lockValue(test.lock)).isEqualTo(((DefaultLockHandle) handle).token());
                        assertThat(handle.release()).isTrue();
                    }
                };
            }
        };

        private final String description;

        final LockCommand heldBack;

        InterruptedOperation(String description, LockCommand heldBack) {
            this.description = description;
            this.heldBack = heldBack;
        }

        abstract Exercise prepare(InterruptInjectionTest test);

        boolean happens(InterruptMoment moment) {
            return true;
        }

        @Override
        public String toString() {
            return description;
        }

    }

    static Stream<Arguments> everyOperationAtEveryMoment() {
        return Arrays.stream(InterruptedOperation.values())
            .flatMap(operation -> Arrays.stream(InterruptMoment.values())
                .filter(operation::happens)
                .map(moment -> Arguments.of(operation, moment)));
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("everyOperationAtEveryMoment")
    void anInterruptedCallReturnsCoherentlyKeepsTheFlagAndLeavesNothingOrphanedInRedis(InterruptedOperation operation,
            InterruptMoment moment) throws Exception {
        Exercise exercise = operation.prepare(this);
        FaultRule heldBack = moment == InterruptMoment.INTERRUPTED_DURING_THE_CALL && operation.heldBack != null
                ? services.proxy.onNext(operation.heldBack.on(lock)).delayReply(REPLY_DELAY) : null;
        long commandsBefore = lockCommandsThroughTheProxy();

        CompletableFuture<Outcome> call = new CompletableFuture<>();
        Thread caller = new Thread(() -> {
            if (moment == InterruptMoment.FLAG_SET_BEFORE_THE_CALL) {
                Thread.currentThread().interrupt();
            }
            try {
                Object value = exercise.call();
                call.complete(new Outcome(value, null, Thread.currentThread().isInterrupted()));
            }
            catch (Throwable ex) {
                call.complete(new Outcome(null, ex, Thread.currentThread().isInterrupted()));
            }
        }, "interrupted-caller");
        caller.start();
        if (moment == InterruptMoment.INTERRUPTED_DURING_THE_CALL) {
            BooleanSupplier inFlight = heldBack != null ? () -> heldBack.triggerCount() > 0 : exercise.waiting();
            await().atMost(Duration.ofSeconds(20)).until(inFlight::getAsBoolean);
            caller.interrupt();
        }

        Outcome outcome = call.get(CALL_RETURNS.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(outcome.flagSetAfterwards()).as("the interrupt flag after the call").isTrue();
        if (moment == InterruptMoment.FLAG_SET_BEFORE_THE_CALL && outcome.thrown() != null) {
            assertThat(lockCommandsThroughTheProxy()).as("lock commands sent by a caller that did not start")
                .isEqualTo(commandsBefore);
        }
        exercise.verify(outcome);
    }

    /**
     * An acquisition that is interrupted must end in an exception that says so (not a
     * timeout, not a backend failure), and leave nothing of its own in Redis: no key, no
     * queue entry. With a holder, the holder's release then frees the lock rather than
     * handing it to the interrupted caller.
     */
    private Exercise acquisition(ThrowingCall call, LockHandle holder) {
        return new Exercise() {
            @Override
            public Object call() throws Exception {
                return call.call();
            }

            @Override
            public void verify(Outcome outcome) {
                assertThat(outcome.thrown()).as("what the interrupted acquisition threw")
                    .isInstanceOf(LockAcquisitionException.class)
                    .isNotInstanceOf(LockBackendException.class)
                    .hasMessageContaining("Interrupted")
                    .hasCauseInstanceOf(InterruptedException.class);
                String holderToken = holder == null ? null : ((DefaultLockHandle) holder).token();
                await().atMost(UNDONE).untilAsserted(() -> {
                    assertThat(services.lockValue(lock)).as("the lock key").isEqualTo(holderToken);
                    assertThat(services.queueLength(lock)).as("queue entries").isZero();
                    assertThat(services.waiterEntries(lock)).as("waiter entries").isZero();
                });
                if (holder != null) {
                    assertThat(holder.release()).isTrue();
                    assertThat(services.lockValue(lock)).as("the lock after its holder released it").isNull();
                }
                Optional<LockHandle> next = services.direct.service.tryLock(key, TTL, Duration.ZERO);
                assertThat(next).as("the lock for the next caller").isPresent();
                next.get().release();
            }
        };
    }

    /**
     * A release or close runs to completion: the key is gone when it returns, and the
     * handle no longer held.
     */
    private Exercise release(ThrowingCall call, LockHandle handle, Object expected) {
        return new Exercise() {
            @Override
            public Object call() throws Exception {
                return call.call();
            }

            @Override
            public void verify(Outcome outcome) {
                assertThat(outcome.thrown()).isNull();
                assertThat(outcome.value()).isEqualTo(expected);
                assertThat(services.lockValue(lock)).as("the lock key once the call returned").isNull();
                assertThat(handle.isHeld()).isFalse();
            }
        };
    }

    @FunctionalInterface
    interface ThrowingCall {

        Object call() throws Exception;

    }

    private static long lockCommandsThroughTheProxy() {
        return services.proxy.commandCount("SET") + services.proxy.commandCount("EVALSHA")
                + services.proxy.commandCount("EVAL");
    }

    // ------------------------------------------------------------------------------------------------
    // annotation

    private ApplicationContextRunner annotationContext() {
        return new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS,
                    DistributedLockAutoConfiguration.class, DistributedLockAnnotationAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + services.proxy.host(),
                    "spring.data.redis.port=" + services.proxy.port(),
                    "distributed-lock.operation-timeout=" + OPERATION_TIMEOUT.toMillis() + "ms")
            .withBean(GuardedWork.class);
    }

    /** A bean whose method the annotation guards. */
    static class GuardedWork {

        private final List<String> ran = new CopyOnWriteArrayList<>();

        @DistributedLock(key = "#key", waitTime = "0s")
        public String work(String key) {
            ran.add(key);
            return "done";
        }

        /**
         * The keys the method ran for (a method, since the bean is a class-based proxy).
         */
        public List<String> ran() {
            return ran;
        }

    }

    @Test
    void anAnnotatedMethodCalledWithTheFlagSetDoesNotRunAndLeavesNoKey() {
        annotationContext().run(context -> {
            GuardedWork work = context.getBean(GuardedWork.class);
            connect(work);

            Outcome outcome = callInterrupted(() -> work.work(key), null);

            assertThat(outcome.flagSetAfterwards()).isTrue();
            assertThat(outcome.thrown()).isInstanceOf(LockAcquisitionException.class)
                .hasMessageContaining("Interrupted");
            assertThat(work.ran()).doesNotContain(key);
            assertThat(services.lockValue(lock)).isNull();
        });
    }

    @Test
    void anAnnotatedMethodInterruptedWhileAcquiringDoesNotRunAndLeavesNoKey() {
        annotationContext().run(context -> {
            GuardedWork work = context.getBean(GuardedWork.class);
            connect(work);
            FaultRule heldBack = services.proxy.onNext(LockCommand.BARE_ACQUIRE.on(lock)).delayReply(REPLY_DELAY);

            Outcome outcome = callInterrupted(() -> work.work(key), heldBack);

            assertThat(outcome.flagSetAfterwards()).isTrue();
            assertThat(outcome.thrown()).isInstanceOf(LockAcquisitionException.class)
                .hasMessageContaining("Interrupted");
            assertThat(work.ran()).doesNotContain(key);
            await().atMost(UNDONE).untilAsserted(() -> assertThat(services.lockValue(lock)).isNull());
        });
    }

    @Test
    void anAnnotatedMethodInterruptedWhileReleasingReturnsItsResultAndReleases() {
        annotationContext().run(context -> {
            GuardedWork work = context.getBean(GuardedWork.class);
            connect(work);
            FaultRule heldBack = services.proxy.onNext(LockCommand.RELEASE_SCRIPT.on(lock)).delayReply(REPLY_DELAY);

            Outcome outcome = callInterrupted(() -> work.work(key), heldBack);

            assertThat(outcome.flagSetAfterwards()).isTrue();
            assertThat(outcome.thrown()).isNull();
            assertThat(outcome.value()).isEqualTo("done");
            assertThat(work.ran()).contains(key);
            assertThat(services.lockValue(lock)).isNull();
        });
    }

    /**
     * The context's own connection opens on its first call: make that call before any
     * interrupt.
     */
    private static void connect(GuardedWork work) {
        await().atMost(Duration.ofSeconds(10))
            .ignoreException(LockBackendException.class)
            .until(() -> work.work("connect").equals("done"));
    }

    /**
     * Calls on a thread of its own, interrupted before the call if {@code heldBack} is
     * null, otherwise once the held-back command went out.
     */
    private static Outcome callInterrupted(ThrowingCall call, FaultRule heldBack) throws Exception {
        CompletableFuture<Outcome> result = new CompletableFuture<>();
        Thread caller = new Thread(() -> {
            if (heldBack == null) {
                Thread.currentThread().interrupt();
            }
            try {
                Object value = call.call();
                result.complete(new Outcome(value, null, Thread.currentThread().isInterrupted()));
            }
            catch (Throwable ex) {
                result.complete(new Outcome(null, ex, Thread.currentThread().isInterrupted()));
            }
        }, "interrupted-caller");
        caller.start();
        if (heldBack != null) {
            await().atMost(Duration.ofSeconds(20)).until(() -> heldBack.triggerCount() > 0);
            caller.interrupt();
        }
        return result.get(CALL_RETURNS.toMillis(), TimeUnit.MILLISECONDS);
    }

    // ------------------------------------------------------------------------------------------------
    // watchdog

    @Test
    void anInterruptOfTheWatchdogWhileItRenewsDoesNotCostTheLease() throws Exception {
        List<RenewalOutcome> renewals = new CopyOnWriteArrayList<>();
        try (LockServiceConnection instance = recordingRenewals(renewals)) {
            Duration lease = Duration.ofMillis(900);
            DefaultLockHandle handle = (DefaultLockHandle) instance.service
                .lock(LockRequest.of(key).withTtl(lease).withWaitTime(Duration.ZERO).withWatchdog(true));
            FaultRule heldBack = services.proxy.onNext(LockCommand.RENEW_SCRIPT.on(lock)).delayReply(REPLY_DELAY);
            await().atMost(Duration.ofSeconds(20)).until(() -> heldBack.triggerCount() > 0);

            Thread watchdog = threadIn("distributed-lock-watchdog", "renewDueLeases");
            watchdog.interrupt();

            // The interrupted renewal itself succeeded, and so do the ones after it.
            await().atMost(Duration.ofSeconds(20)).until(() -> renewals.size() >= 3);
            assertThat(renewals).containsOnly(RenewalOutcome.RENEWED);
            assertThat(handle.isHeld()).isTrue();
            assertThat(handle.isLost()).isFalse();
            assertThat(services.lockValue(lock)).isEqualTo(handle.token());
            assertThat(services.redis.pttl(lock)).isGreaterThan(lease.toMillis() / 3);
            assertThat(handle.release()).isTrue();
        }
    }

    @Test
    void anInterruptOfTheIdleWatchdogDoesNotCostTheNextRenewal() throws Exception {
        List<RenewalOutcome> renewals = new CopyOnWriteArrayList<>();
        try (LockServiceConnection instance = recordingRenewals(renewals)) {
            Duration lease = Duration.ofMillis(900);
            DefaultLockHandle handle = (DefaultLockHandle) instance.service
                .lock(LockRequest.of(key).withTtl(lease).withWaitTime(Duration.ZERO).withWatchdog(true));
            // A first renewal, held back a moment, tells which of the watchdog threads is
            // this instance's.
            FaultRule heldBack = services.proxy.onNext(LockCommand.RENEW_SCRIPT.on(lock)).delayReply(REPLY_DELAY);
            await().atMost(Duration.ofSeconds(20)).until(() -> heldBack.triggerCount() > 0);
            Thread watchdog = threadIn("distributed-lock-watchdog", "renewDueLeases");
            await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(5))
                .until(() -> !renewals.isEmpty() && !isIn(watchdog, "renewDueLeases"));

            // Between renewals the thread waits for the next one: the interrupt lands
            // there.
            watchdog.interrupt();
            int before = renewals.size();

            await().atMost(Duration.ofSeconds(20)).until(() -> renewals.size() >= before + 2);
            assertThat(renewals).containsOnly(RenewalOutcome.RENEWED);
            assertThat(handle.isHeld()).isTrue();
            assertThat(services.lockValue(lock)).isEqualTo(handle.token());
            assertThat(handle.release()).isTrue();
        }
    }

    /**
     * An instance through the proxy whose watchdog's renewal outcomes land in
     * {@code renewals}.
     */
    private static LockServiceConnection recordingRenewals(List<RenewalOutcome> renewals) {
        LockServiceConnection instance = new LockServiceConnection(services.proxy.host(), services.proxy.port(),
                OPERATION_TIMEOUT, true, backend -> new CountingBackend(backend) {
                    @Override
                    public void renew(List<LockBackend.LeaseRenewal> leases, RenewalOutcomes outcomes) {
                        super.renew(leases, (index, outcome) -> {
                            renewals.add(outcome);
                            outcomes.outcome(index, outcome);
                        });
                    }
                });
        await().atMost(Duration.ofSeconds(10))
            .ignoreException(LockBackendException.class)
            .until(() -> instance.service.tryLock("connect", TTL, Duration.ZERO)
                .map(LockHandle::release)
                .orElse(false));
        return instance;
    }

    /**
     * The live thread named {@code name} that is in {@code method} now, found once it is
     * there. Several instances each have a watchdog thread of that name; only the one at
     * work is in the renewal.
     */
    private static Thread threadIn(String name, String method) {
        Thread[] found = new Thread[1];
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5)).until(() -> {
            for (Thread thread : Thread.getAllStackTraces().keySet()) {
                if (thread.getName().equals(name) && isIn(thread, method)) {
                    found[0] = thread;
                    return true;
                }
            }
            return false;
        });
        return found[0];
    }

    private static boolean isIn(Thread thread, String method) {
        return Arrays.stream(thread.getStackTrace()).anyMatch(frame -> frame.getMethodName().equals(method));
    }

}
