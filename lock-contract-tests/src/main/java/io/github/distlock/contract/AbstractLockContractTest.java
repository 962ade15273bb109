package io.github.distlock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;

import io.github.distlock.DistributedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockLostEvent;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.testsupport.FaultRule;
import io.github.distlock.testsupport.RedisCommandMatcher;
import io.github.distlock.testsupport.RedisFaultProxy;

/**
 * What {@link LockService}, {@link LockHandle} and {@link DistributedLock} promise, for
 * every lock backend: the contract, after ShedLock's
 * {@code AbstractLockProviderIntegrationTest}. A concrete subclass supplies only the
 * setup: the Redis to start ({@link #startRedis()}), its {@link Capability capabilities},
 * and optionally how an application connects to it ({@link #applicationProperties()},
 * {@link #applicationSources()}: another connection factory, say).
 *
 * <pre>{@code
 * class StandaloneLettuceLockContractTest extends AbstractLockContractTest {
 *     protected ContractRedis startRedis() { return StandaloneRedis.start(); }
 *     protected Set<Capability> capabilities() { return EnumSet.allOf(Capability.class); }
 * }
 * }</pre>
 *
 * <p>
 * Each class starts its Redis and two application instances ({@link ContractApplication})
 * once; every test uses lock names of its own, and Redis is emptied before each. Tests go
 * through the public API only and read Redis through a side door ({@link ContractRedis},
 * {@link LockKeyspace}) to check what is left behind. A test of a capability the backend
 * does not declare is skipped. "Eventually" is Awaitility with a generous bound
 * ({@link #PATIENCE}); nothing asserts an upper bound on time.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractLockContractTest {

    /**
     * The most any "eventually" may take before a test fails: a hang guard on a busy
     * machine, not a timing claim.
     */
    protected static final Duration PATIENCE = Duration.ofSeconds(20);

    private static final Duration TTL = Duration.ofSeconds(30);

    private static final Duration LONG_WAIT = Duration.ofSeconds(30);

    private ContractStore store;

    private ContractApplication first;

    private ContractApplication second;

    private ContractApplication proxied;

    private RedisFaultProxy proxy;

    private ExecutorService threads;

    private final AtomicInteger names = new AtomicInteger();

    private String testName;

    /**
     * Starts the store the backend keeps its locks in; called once per class, closed
     * after its last test. By default the Redis of {@link #startRedis()}, with the layout
     * of {@link #keyspace()}.
     */
    protected ContractStore startStore() {
        return new RedisContractStore(startRedis(), keyspace());
    }

    /**
     * Starts the Redis the backend runs on, for a Redis backend; called by
     * {@link #startStore()}.
     */
    protected ContractRedis startRedis() {
        throw new UnsupportedOperationException(
                getClass().getSimpleName() + " overrides neither startStore nor startRedis");
    }

    /** The optional abilities this backend has; tests of the others are skipped. */
    protected abstract Set<Capability> capabilities();

    /** Where this backend keeps a lock in Redis, for the suite's side door. */
    protected LockKeyspace keyspace() {
        return LockKeyspace.SINGLE_REDIS;
    }

    /**
     * Properties every application instance gets besides the Redis address, e.g.
     * {@code spring.data.redis.client-type=jedis}.
     */
    protected List<String> applicationProperties() {
        return List.of();
    }

    /**
     * Configuration classes every application instance gets, e.g. one declaring another
     * connection factory.
     */
    protected Class<?>[] applicationSources() {
        return new Class<?>[0];
    }

    // ------------------------------------------------------------------------------------------
    // lifecycle

    @BeforeAll
    void startRedisAndTwoInstances() {
        threads = Executors.newCachedThreadPool(runnable -> {
            Thread thread = new Thread(runnable, "contract-caller");
            thread.setDaemon(true);
            return thread;
        });
        store = startStore();
        first = startApplication(store.applicationProperties());
        second = startApplication(store.applicationProperties());
        warmUp(first, second, has(Capability.FENCING));
        warmUp(second, first, has(Capability.FENCING));
    }

    /**
     * Connects {@code instance}, caches every lock script in Redis and starts its release
     * subscription, so that a test's first short lease is not spent on a cold start (a
     * lease over before the call returns is given back).
     */
    private static void warmUp(ContractApplication instance, ContractApplication other, boolean fencing) {
        String name = "warm-up";
        LockRequest request = LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO);
        // The first call opens the connection, which on a loaded machine took longer than
        // the operation timeout.
        for (ContractApplication connecting : List.of(instance, other)) {
            await().atMost(PATIENCE)
                .ignoreExceptions()
                .until(() -> connecting.lockService().tryLock(request).map(LockHandle::release).orElse(false));
        }
        LockHandle held = instance.lockService().lock(fencing ? request.withFencingToken() : request);
        other.lockService().tryLock(name, TTL, Duration.ofMillis(100)).ifPresent(LockHandle::release);
        held.release();
        other.lockService().tryLock(name, TTL, Duration.ZERO).ifPresent(LockHandle::release);
    }

    @AfterAll
    void stopInstancesAndRedis() {
        threads.shutdownNow();
        for (AutoCloseable closeable : new AutoCloseable[] { proxied, proxy, first, second, store }) {
            try {
                if (closeable != null) {
                    closeable.close();
                }
            }
            catch (Exception ex) {
                // Closing the rest matters more than one failure to close.
            }
        }
    }

    @BeforeEach
    void emptyRedis(TestInfo info) {
        testName = info.getTestMethod().map(method -> method.getName()).orElse("test");
        if (proxy != null) {
            proxy.heal();
        }
        store.reset();
    }

    @AfterEach
    void clearWhatAFailedTestLeft() {
        Thread.interrupted();
        if (proxy != null) {
            proxy.heal();
        }
    }

    // ------------------------------------------------------------------------------------------
    // exclusion

    @Test
    void twoInstancesContendingFromManyThreadsNeverOverlapAndEveryCallCompletes() throws Exception {
        String name = name();
        int threadsPerInstance = 3;
        int callsPerThread = 20;
        AtomicBoolean inSection = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        // Read, yield, write: updates get lost if two holders ever interleave.
        AtomicInteger counter = new AtomicInteger();
        Supplier<Integer> section = () -> {
            if (!inSection.compareAndSet(false, true)) {
                overlaps.incrementAndGet();
            }
            int seen = counter.get();
            Thread.yield();
            counter.set(seen + 1);
            inSection.set(false);
            return seen;
        };
        List<Future<Integer>> callers = new ArrayList<>();
        for (ContractApplication instance : List.of(first, second)) {
            for (int t = 0; t < threadsPerInstance; t++) {
                callers.add(threads.submit(() -> {
                    int completed = 0;
                    for (int i = 0; i < callsPerThread; i++) {
                        if (i % 2 == 0) {
                            instance.guardedWork().run(name, section);
                        }
                        else {
                            instance.lockService().callLocked(name, TTL, LONG_WAIT, section::get);
                        }
                        completed++;
                    }
                    return completed;
                }));
            }
        }

        int completed = 0;
        for (Future<Integer> caller : callers) {
            completed += get(caller);
        }

        int expected = 2 * threadsPerInstance * callsPerThread;
        assertThat(completed).as("calls that completed").isEqualTo(expected);
        assertThat(overlaps).as("times a holder found another one inside").hasValue(0);
        assertThat(counter).as("increments, none lost to an overlap").hasValue(expected);
        assertThat(leftovers(name)).as("nothing held or queued afterwards").isEmpty();
    }

    @Test
    void aLockHeldByOneInstanceIsRefusedToAnotherUntilReleased() {
        String name = name();
        LockHandle held = first.lockService().lock(name, TTL, Duration.ZERO);

        assertThat(tryNow(second, name)).isEmpty();
        Throwable timeout = catchThrowable(() -> second.lockService().lock(name, TTL, Duration.ofMillis(200)));
        assertThat(timeout).isInstanceOf(LockTimeoutException.class);
        assertThat(((LockTimeoutException) timeout).getKey()).isEqualTo(name);
        AtomicBoolean ran = new AtomicBoolean();
        Throwable notRun = catchThrowable(
                () -> second.lockService().callLocked(name, TTL, Duration.ZERO, () -> ran.getAndSet(true)));
        assertThat(notRun).isInstanceOf(LockTimeoutException.class);
        assertThat(ran).as("callLocked ran the action without the lock").isFalse();
        assertThat(held.key()).isEqualTo(name);
        assertThat(held.isHeld()).isTrue();

        assertThat(held.release()).isTrue();
        assertThat(held.isHeld()).isFalse();
        assertThat(held.release()).as("release is idempotent: only the first call removes the lock").isFalse();
        List<LockHandle> told = new ArrayList<>();
        held.onLost(told::add);
        assertThat(told).as("a released lock is not a lost one").isEmpty();
        assertThat(leftovers(name)).isEmpty();
        Optional<LockHandle> next = tryNow(second, name);
        assertThat(next).isPresent();
        assertThat(next.get().release()).isTrue();
    }

    @Test
    void aTryLockOnAFreeLockSucceedsAndCloseReleasesIt() {
        String name = name();
        try (LockHandle held = first.lockService().tryLock(name, TTL, Duration.ZERO).orElseThrow()) {
            assertThat(held.isHeld()).isTrue();
            assertThat(lockKeyExists(name)).isTrue();
        }
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void callLockedReleasesTheLockWhenTheActionThrows() {
        String name = name();
        IllegalStateException failure = new IllegalStateException("the action's own failure");

        Throwable thrown = catchThrowable(() -> first.lockService().callLocked(name, TTL, Duration.ZERO, () -> {
            assertThat(tryNow(second, name)).as("held while the action runs").isEmpty();
            throw failure;
        }));

        assertThat(thrown).isSameAs(failure);
        assertThat(leftovers(name)).isEmpty();
    }

    // ------------------------------------------------------------------------------------------
    // release and expiry

    @Test
    void aReleaseAfterTheLeaseRanOutNeverDeletesTheNextOwnersLock() {
        String name = name();
        LockHandle ours = first.lockService()
            .lock(LockRequest.of(name).withTtl(Duration.ofMillis(500)).withWaitTime(Duration.ZERO).withWatchdog(false));

        LockHandle theirs = await().atMost(PATIENCE).until(() -> tryNow(second, name).orElse(null), Objects::nonNull);

        assertThat(ours.isHeld()).as("a fixed lease that ran out is not held").isFalse();
        assertThat(ours.isLost()).as("a fixed lease that ran out is not reported lost").isFalse();
        assertThat(lostIn(first, name)).as("no LockLostEvent for a fixed lease").isEmpty();
        assertThat(ours.release()).as("our release after expiry").isFalse();
        ours.close();
        assertThat(lockKeyExists(name)).as("the next owner's lock is still in Redis").isTrue();
        assertThat(theirs.isHeld()).isTrue();
        assertThat(tryNow(first, name)).as("and still excludes us").isEmpty();
        assertThat(theirs.release()).isTrue();
    }

    @Test
    void aHandleOwnsTheLockNotTheThreadSoAnotherThreadCanReleaseIt() {
        String name = name();
        LockHandle held = first.lockService().lock(name, TTL, Duration.ZERO);

        boolean released = get(threads.submit(held::release));

        assertThat(released).isTrue();
        assertThat(held.isHeld()).isFalse();
        assertThat(leftovers(name)).isEmpty();
    }

    // ------------------------------------------------------------------------------------------
    // watchdog

    @Test
    void theWatchdogKeepsALeaseAlivePastSeveralTtls() {
        String name = name();
        Duration ttl = Duration.ofMillis(600);
        LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(ttl).withWaitTime(Duration.ZERO).withWatchdog(true));

        await().during(ttl.multipliedBy(4)).atMost(PATIENCE).until(() -> held.isHeld() && lockKeyExists(name));

        assertThat(tryNow(second, name)).as("another instance is still excluded").isEmpty();
        assertThat(held.isLost()).isFalse();
        assertThat(held.release()).isTrue();
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void theWatchdogNeverRecreatesAReleasedLock() {
        String name = name();
        Duration ttl = Duration.ofMillis(500);
        LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(ttl).withWaitTime(Duration.ZERO).withWatchdog(true));
        assertThat(held.release()).isTrue();

        await().during(ttl.multipliedBy(3)).atMost(PATIENCE).until(() -> leftovers(name).isEmpty());
        assertThat(held.isLost()).as("a released lease is not lost").isFalse();
    }

    // ------------------------------------------------------------------------------------------
    // lost leases

    @Test
    void aLeaseDeletedBehindItsHoldersBackIsReportedToTheHandleItsListenersAndTheApplication() {
        String name = name();
        LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(Duration.ofMillis(900)).withWaitTime(Duration.ZERO).withWatchdog(true));
        long token = has(Capability.FENCING) ? held.fencingToken() : 0;
        List<LockHandle> told = new CopyOnWriteArrayList<>();
        held.onLost(told::add);

        deleteBehindTheHoldersBack(name);

        await().atMost(PATIENCE).until(() -> !told.isEmpty() && lostIn(first, name).isPresent());
        assertThat(told).as("the listener ran once, with the handle").containsExactly(held);
        assertThat(held.isLost()).isTrue();
        assertThat(held.isHeld()).isFalse();
        LockLostEvent event = lostIn(first, name).orElseThrow();
        assertThat(event.getHandle()).isSameAs(held);
        assertThat(event.getReason()).isNotBlank();
        if (has(Capability.FENCING)) {
            assertThat(event.getFencingToken()).as("the lost holder's token, for the resource to fence off")
                .hasValue(token);
        }
        assertThat(lostIn(second, name)).as("only the holder's application hears of it").isEmpty();
        List<LockHandle> late = new ArrayList<>();
        held.onLost(late::add);
        assertThat(late).as("a listener registered after the loss runs at once").containsExactly(held);
        assertThat(held.release()).as("nothing of ours left to release").isFalse();
        assertThat(tryNow(second, name)).as("free for the next owner").isPresent();
    }

    @Test
    void anAnnotatedMethodWhoseLeaseWasLostRunsToItsEndThenThrowsLockLostException() {
        String name = name();
        AtomicBoolean finished = new AtomicBoolean();

        Throwable thrown = catchThrowable(() -> first.guardedWork().runWithShortLease(name, () -> {
            deleteBehindTheHoldersBack(name);
            await().atMost(PATIENCE).until(() -> lostIn(first, name).isPresent());
            finished.set(true);
            return "finished";
        }));

        assertThat(finished).as("the method ran to its end").isTrue();
        assertThat(thrown).isInstanceOf(LockLostException.class);
        assertThat(((LockLostException) thrown).getKey()).isEqualTo(name);
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void anAnnotatedMethodThatOutlivedItsFixedLeaseThrowsLockLostExceptionAfterItReturns() {
        String name = name();

        Throwable thrown = catchThrowable(() -> first.guardedWork().runWithFixedLease(name, () -> {
            await().atMost(PATIENCE).until(() -> !lockKeyExists(name));
            return "finished";
        }));

        assertThat(thrown).isInstanceOf(LockLostException.class);
        assertThat(((LockLostException) thrown).getKey()).isEqualTo(name);
    }

    @Test
    void aLostLeaseInterruptsAnAnnotatedMethodThatAsksForItOnlyWhileItRuns() {
        String name = name();
        AtomicBoolean interrupted = new AtomicBoolean();

        Throwable thrown = catchThrowable(() -> first.guardedWork().runInterruptedOnLoss(name, () -> {
            deleteBehindTheHoldersBack(name);
            try {
                Thread.sleep(PATIENCE.toMillis());
            }
            catch (InterruptedException expected) {
                interrupted.set(true);
            }
            return "stopped";
        }));

        assertThat(interrupted).as("the method's blocking call was interrupted").isTrue();
        assertThat(thrown).isInstanceOf(LockLostException.class);
        assertThat(Thread.currentThread().isInterrupted()).as("no interrupt left for the caller's thread").isFalse();
        // The event is published after the interrupt, on the watchdog's listener thread:
        // it may come a moment after
        // the method returned.
        await().atMost(PATIENCE).until(() -> lostIn(first, name).isPresent());
    }

    // ------------------------------------------------------------------------------------------
    // fencing

    @Test
    void fencingTokensStrictlyIncreaseAcrossHoldersAndInstances() {
        requires(Capability.FENCING);
        String name = name();
        long last = 0;
        for (int i = 0; i < 6; i++) {
            ContractApplication instance = i % 2 == 0 ? first : second;
            LockRequest request = LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO);
            // Drawn with the lock, or on the first fencingToken() call: the order is the
            // same.
            request = i % 3 == 0 ? request.withFencingToken() : request;
            try (LockHandle held = instance.lockService().lock(request)) {
                long token = held.fencingToken();

                assertThat(token).as("holder %d's token", i).isGreaterThan(last);
                assertThat(held.fencingToken()).as("issued once per acquisition").isEqualTo(token);
                assertThat(held.issuedFencingToken()).hasValue(token);
                last = token;
            }
        }
    }

    @Test
    void withoutFencingTokensAskingForOneFailsBeforeAnythingIsSentAndTheLockWorksWithoutIt() {
        assumeFalse(has(Capability.FENCING), () -> getClass().getSimpleName() + " issues fencing tokens");
        String name = name();
        assertThatThrownBy(() -> first.lockService().tryLock(LockRequest.of(name).withTtl(TTL).withFencingToken()))
            .isInstanceOf(UnsupportedOperationException.class)
            .hasMessageContaining("FencingLockBackend");
        assertThat(lockKeyExists(name)).as("nothing was sent").isFalse();
        try (LockHandle held = first.lockService().lock(name, TTL, Duration.ZERO)) {
            assertThatThrownBy(held::fencingToken).isInstanceOf(UnsupportedOperationException.class);
            assertThat(held.issuedFencingToken()).isEmpty();
            assertThat(held.isHeld()).isTrue();
        }
    }

    @Test
    void fencingTokensStillIncreaseAfterTheCounterWasEvicted() {
        requires(Capability.FENCING);
        String name = name();
        long before;
        try (LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken())) {
            before = held.fencingToken();
        }
        store.evictFencingCounter(name);

        try (LockHandle held = second.lockService().lock(name, TTL, Duration.ZERO)) {
            assertThat(held.fencingToken()).isGreaterThan(before);
        }
    }

    @Test
    void aFencingTokenAskedForAfterTheLeaseRanOutIsRefusedAndTheNextHolderGetsALargerOne() {
        requires(Capability.FENCING);
        String name = name();
        long previous;
        try (LockHandle earlier = second.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken())) {
            previous = earlier.fencingToken();
        }
        LockHandle expired = first.lockService()
            .lock(LockRequest.of(name).withTtl(Duration.ofMillis(500)).withWaitTime(Duration.ZERO).withWatchdog(false));
        LockHandle next = await().atMost(PATIENCE).until(() -> tryNow(second, name).orElse(null), Objects::nonNull);

        assertThat(catchThrowable(expired::fencingToken)).as("no token for a lock that is no longer ours")
            .isInstanceOf(LockLostException.class);
        assertThat(expired.issuedFencingToken()).isEmpty();
        assertThat(next.fencingToken()).as("the next holder's token").isGreaterThan(previous);
        assertThat(next.release()).isTrue();

        LockHandle released = first.lockService().lock(name, TTL, Duration.ZERO);
        assertThat(released.release()).isTrue();
        assertThat(catchThrowable(released::fencingToken)).as("no token after release")
            .isInstanceOf(IllegalStateException.class);
    }

    // ------------------------------------------------------------------------------------------
    // waiting and hand-over

    @Test
    void aWaiterGetsTheLockOnceTheHolderReleasesIt() {
        String name = name();
        LockHandle holder = first.lockService().lock(name, TTL, Duration.ZERO);
        long holderToken = has(Capability.FENCING) ? holder.fencingToken() : 0;
        Future<LockHandle> waiter = threads.submit(() -> second.lockService().lock(name, TTL, LONG_WAIT));
        awaitWaiting(name, 1, waiter);

        assertThat(holder.release()).isTrue();

        LockHandle handedOver = get(waiter);
        assertThat(handedOver.isHeld()).isTrue();
        if (has(Capability.FENCING) && has(Capability.WAIT_QUEUE)) {
            // A hand-over draws the token with it; a backend that polls draws it on
            // demand.
            assertThat(handedOver.issuedFencingToken()).as("a lock handed over comes with its token").isPresent();
        }
        assertThat(tryNow(first, name)).as("the waiter holds it now").isEmpty();
        if (has(Capability.FENCING)) {
            assertThat(handedOver.fencingToken()).isGreaterThan(holderToken);
        }
        assertThat(handedOver.release()).isTrue();
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void waitersInSeveralInstancesGetTheLockInTheOrderTheyStartedWaiting() {
        requires(Capability.WAIT_QUEUE);
        String name = name();
        LockHandle holder = first.lockService().lock(name, TTL, Duration.ZERO);
        List<String> order = new CopyOnWriteArrayList<>();
        List<Future<Object>> waiters = new ArrayList<>();
        List<ContractApplication> instances = List.of(second, first, second, first);
        for (int i = 0; i < instances.size(); i++) {
            String waiterName = "waiter " + i;
            LockService service = instances.get(i).lockService();
            Future<Object> waiter = threads.submit(() -> {
                try (LockHandle held = service.lock(name, TTL, LONG_WAIT)) {
                    order.add(waiterName);
                }
                return null;
            });
            waiters.add(waiter);
            awaitWaiting(name, i + 1, waiter);
        }

        assertThat(holder.release()).isTrue();
        waiters.forEach(AbstractLockContractTest::get);

        assertThat(order).containsExactly("waiter 0", "waiter 1", "waiter 2", "waiter 3");
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void aHolderThatAsksAgainRightAfterItsReleaseQueuesBehindTheWaiter() {
        requires(Capability.WAIT_QUEUE);
        String name = name();
        LockHandle holder = first.lockService().lock(name, TTL, Duration.ZERO);
        List<String> order = new CopyOnWriteArrayList<>();
        Future<Object> waiter = threads.submit(() -> {
            try (LockHandle held = second.lockService().lock(name, TTL, LONG_WAIT)) {
                order.add("waiter");
            }
            return null;
        });
        awaitWaiting(name, 1, waiter);

        assertThat(holder.release()).isTrue();
        try (LockHandle again = first.lockService().lock(name, TTL, LONG_WAIT)) {
            order.add("former holder");
        }
        get(waiter);

        assertThat(order).containsExactly("waiter", "former holder");
    }

    @Test
    void aWaiterGetsALockWhoseKeyWasDeletedWithoutARelease() {
        String name = name();
        LockHandle holder = first.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withWatchdog(false));
        Future<LockHandle> waiter = threads.submit(() -> second.lockService().lock(name, TTL, LONG_WAIT));
        awaitWaiting(name, 1, waiter);

        // A foreign client's DEL, or an eviction: nobody announces it.
        deleteBehindTheHoldersBack(name);

        LockHandle next = get(waiter);
        assertThat(next.isHeld()).isTrue();
        assertThat(holder.release()).as("the old holder's release removes nothing").isFalse();
        assertThat(lockKeyExists(name)).isTrue();
        assertThat(next.release()).isTrue();
    }

    @Test
    void aWaiterGetsALockWhoseHoldersLeaseRanOut() {
        String name = name();
        LockHandle holder = first.lockService()
            .lock(LockRequest.of(name)
                .withTtl(Duration.ofMillis(1500))
                .withWaitTime(Duration.ZERO)
                .withWatchdog(false));
        Future<LockHandle> waiter = threads.submit(() -> second.lockService().lock(name, TTL, LONG_WAIT));
        awaitWaiting(name, 1, waiter);

        LockHandle next = get(waiter);

        assertThat(next.isHeld()).isTrue();
        assertThat(holder.isHeld()).isFalse();
        assertThat(holder.release()).isFalse();
        assertThat(next.release()).isTrue();
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void aHandedOverLockLastsTheWaitersLeaseNotTheHolders() {
        String name = name();
        Duration waiterTtl = Duration.ofSeconds(3);
        LockHandle holder = first.lockService().lock(name, Duration.ofMinutes(10), Duration.ZERO);
        Future<LockHandle> waiter = threads.submit(() -> second.lockService()
            .lock(LockRequest.of(name).withTtl(waiterTtl).withWaitTime(LONG_WAIT).withWatchdog(false)));
        awaitWaiting(name, 1, waiter);

        assertThat(holder.release()).isTrue();
        LockHandle next = get(waiter);

        assertThat(pttl(name)).as("the lease in Redis").isPositive().isLessThanOrEqualTo(waiterTtl.toMillis());
        assertThat(next.isHeld()).isTrue();
        assertThat(next.release()).isTrue();
    }

    @Test
    void aWaiterThatGivesUpLeavesNothingBehind() {
        String name = name();
        LockHandle holder = first.lockService().lock(name, TTL, Duration.ZERO);

        Optional<LockHandle> none = second.lockService().tryLock(name, TTL, Duration.ofMillis(300));

        assertThat(none).isEmpty();
        assertThat(holder.release()).isTrue();
        assertThat(leftovers(name)).as("no lock, no queue entry").isEmpty();
    }

    /**
     * A release and the waiter's deadline race: whatever wins, the waiter either holds
     * the lock (a hand-over in the last moment counts) or it is free again, never left
     * with a token that nobody owns until its lease runs out.
     */
    @Test
    void aWaiterWhoseWaitRunsOutAsTheLockIsHandedToItEitherHoldsItOrLeavesItFree() {
        String name = name();
        for (int round = 0; round < 12; round++) {
            LockHandle holder = first.lockService().lock(name, TTL, Duration.ZERO);
            Future<Optional<LockHandle>> waiter = threads
                .submit(() -> second.lockService().tryLock(name, TTL, Duration.ofMillis(200)));
            // Release around the waiter's deadline: a little before, at or after it.
            parkMillis(150 + 10 * round);
            holder.release();

            Optional<LockHandle> outcome = get(waiter);

            assertNoOrphan(name, outcome, "round " + round);
        }
    }

    /**
     * The same race with an interrupt instead of a deadline: an interrupted waiter passes
     * a hand-over on.
     */
    @Test
    void aWaiterInterruptedAsTheLockIsHandedToItEitherHoldsItOrLeavesItFree() {
        String name = name();
        for (int round = 0; round < 12; round++) {
            LockHandle holder = first.lockService().lock(name, TTL, Duration.ZERO);
            AtomicReference<Thread> waiterThread = new AtomicReference<>();
            Future<Optional<LockHandle>> waiter = threads.submit(() -> {
                waiterThread.set(Thread.currentThread());
                try {
                    return Optional.of(second.lockService().lock(name, TTL, LONG_WAIT));
                }
                catch (LockAcquisitionException interrupted) {
                    return Optional.<LockHandle>empty();
                }
                finally {
                    Thread.interrupted();
                }
            });
            awaitWaiting(name, 1, waiter);
            Future<?> releaser = threads.submit(holder::release);
            parkMillis(round % 4);
            waiterThread.get().interrupt();
            get(releaser);

            Optional<LockHandle> outcome = get(waiter);

            assertNoOrphan(name, outcome, "round " + round);
        }
    }

    private void assertNoOrphan(String name, Optional<LockHandle> outcome, String round) {
        if (outcome.isPresent()) {
            assertThat(outcome.get().isHeld()).as(round).isTrue();
            assertThat(outcome.get().release()).as(round).isTrue();
        }
        await().atMost(PATIENCE)
            .untilAsserted(() -> assertThat(leftovers(name))
                .as("%s: %s, and afterwards nothing may stay held", round, outcome.isPresent() ? "held" : "not held")
                .isEmpty());
    }

    private static void parkMillis(long millis) {
        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    // ------------------------------------------------------------------------------------------
    // reentrancy

    @Test
    void nestedAnnotatedCallsOnTheSameKeyJoinTheOuterLockAndOnlyTheOutermostReleases() {
        String name = name();
        GuardedWork work = first.guardedWork();

        String result = work.run(name, () -> {
            // waitTime 0s: were the inner call not joining, it would time out on its own
            // outer lock.
            String inner = work.tryRun(name, () -> {
                assertThat(tryNow(second, name)).isEmpty();
                return "inner";
            });
            assertThat(lockKeyExists(name)).as("the inner call's return released nothing").isTrue();
            assertThat(tryNow(second, name)).isEmpty();
            return inner + " within outer";
        });

        assertThat(result).isEqualTo("inner within outer");
        assertThat(leftovers(name)).as("the outermost call released it").isEmpty();
    }

    @Test
    void aCallOnTheSameKeyFromAnotherThreadIsAnotherOwnerAndDoesNotJoin() {
        String name = name();
        GuardedWork work = first.guardedWork();

        Throwable fromAnotherThread = work.run(name,
                () -> get(threads.submit(() -> catchThrowable(() -> work.tryRun(name, () -> "joined")))));

        assertThat(fromAnotherThread).isInstanceOf(LockTimeoutException.class);
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void aNestedCallDoesNotJoinAHoldWhoseLeaseWasLostButAcquiresAfresh() {
        String name = name();
        GuardedWork work = first.guardedWork();
        AtomicReference<String> inner = new AtomicReference<>();

        Throwable thrown = catchThrowable(() -> work.runWithShortLease(name, () -> {
            deleteBehindTheHoldersBack(name);
            await().atMost(PATIENCE).until(() -> lostIn(first, name).isPresent());
            inner.set(work.tryRun(name, () -> lockKeyExists(name) ? "acquired afresh" : "joined a lost hold"));
            assertThat(leftovers(name)).as("the inner call released its own lock").isEmpty();
            return null;
        }));

        assertThat(inner).hasValue("acquired afresh");
        assertThat(thrown).as("the outer call still reports its loss").isInstanceOf(LockLostException.class);
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void theAnnotationNeverJoinsALockTakenWithLockService() {
        String name = name();
        LockHandle held = first.lockService().lock(name, TTL, Duration.ZERO);
        AtomicBoolean invoked = new AtomicBoolean();

        Throwable thrown = catchThrowable(() -> first.guardedWork().tryRun(name, () -> invoked.getAndSet(true)));

        assertThat(thrown).as("a handle belongs to whoever holds it, not to the thread")
            .isInstanceOf(LockTimeoutException.class);
        assertThat(invoked).isFalse();
        assertThat(held.isHeld()).isTrue();
        assertThat(held.release()).isTrue();
    }

    @Test
    void anInterruptWhileAnAnnotatedCallWaitsEndsItWithoutRunningTheMethod() {
        String name = name();
        LockHandle holder = second.lockService().lock(name, TTL, Duration.ZERO);
        AtomicReference<Thread> caller = new AtomicReference<>();
        AtomicBoolean invoked = new AtomicBoolean();
        AtomicBoolean flagKept = new AtomicBoolean();
        Future<Throwable> call = threads.submit(() -> {
            caller.set(Thread.currentThread());
            Throwable thrown = catchThrowable(() -> first.guardedWork().run(name, () -> invoked.getAndSet(true)));
            flagKept.set(Thread.interrupted());
            return thrown;
        });
        awaitWaiting(name, 1, call);

        caller.get().interrupt();

        assertThat(get(call)).isInstanceOf(LockAcquisitionException.class)
            .hasCauseInstanceOf(InterruptedException.class);
        assertThat(flagKept).isTrue();
        assertThat(invoked).isFalse();
        assertThat(holder.release()).isTrue();
        assertThat(leftovers(name)).isEmpty();
    }

    // ------------------------------------------------------------------------------------------
    // returning later

    @Test
    void anAnnotatedMethodReturningAFutureHoldsTheLockUntilTheFutureCompletes() {
        String name = name();
        CompletableFuture<String> work = new CompletableFuture<>();

        CompletableFuture<String> result = first.guardedWork().runUntilDone(name, () -> work);

        assertThat(result).isNotDone();
        assertThat(tryNow(second, name)).as("held after the method returned, while its work runs").isEmpty();
        threads.submit(() -> work.complete("done"));
        assertThat(get(result)).isEqualTo("done");
        assertThat(leftovers(name)).as("released when the work completed").isEmpty();
    }

    @Test
    void aFutureWhoseLeaseWasLostBeforeItCompletedEndsWithLockLostException() {
        String name = name();
        CompletableFuture<String> work = new CompletableFuture<>();

        CompletableFuture<String> result = first.guardedWork().runUntilDoneWithShortLease(name, () -> work);
        deleteBehindTheHoldersBack(name);
        await().atMost(PATIENCE).until(() -> lostIn(first, name).isPresent());
        work.complete("done");

        Throwable thrown = catchThrowable(() -> get(result));
        assertThat(thrown).isInstanceOf(AssertionError.class).hasCauseInstanceOf(LockLostException.class);
    }

    // ------------------------------------------------------------------------------------------
    // several keys

    @Test
    void severalKeysAreAllHeldWhileTheMethodRunsAndAllReleasedAfter() {
        String a = name() + ":a";
        String b = name() + ":b";

        first.guardedWork().runOnBoth(b, a, () -> {
            assertThat(tryNow(second, a)).isEmpty();
            assertThat(tryNow(second, b)).isEmpty();
            return null;
        });

        assertThat(leftovers(a)).isEmpty();
        assertThat(leftovers(b)).isEmpty();
    }

    @Test
    void severalKeysAreAllOrNothing() {
        String a = name() + ":a";
        String b = name() + ":b";
        LockHandle other = second.lockService().lock(b, TTL, Duration.ZERO);
        AtomicBoolean invoked = new AtomicBoolean();

        Throwable thrown = catchThrowable(() -> first.guardedWork().runOnBoth(a, b, () -> invoked.getAndSet(true)));

        assertThat(thrown).isInstanceOf(LockTimeoutException.class);
        assertThat(((LockTimeoutException) thrown).getKey()).as("names the key that could not be had").isEqualTo(b);
        assertThat(invoked).as("the method ran").isFalse();
        assertThat(leftovers(a)).as("the key that was free was given back").isEmpty();
        assertThat(other.isHeld()).isTrue();
        assertThat(other.release()).isTrue();
    }

    @Test
    void aKeyNamedTwiceAmongSeveralIsLockedOnce() {
        String name = name();

        String result = first.guardedWork().runOnBoth(name, name, () -> {
            assertThat(tryNow(second, name)).isEmpty();
            return "ran";
        });

        assertThat(result).isEqualTo("ran");
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void oneOfSeveralKeysJoinsTheThreadsHoldAndTheOtherIsReleasedWithTheInnerCall() {
        String a = name() + ":a";
        String b = name() + ":b";
        GuardedWork work = first.guardedWork();

        work.run(a, () -> {
            work.runOnBoth(a, b, () -> {
                assertThat(tryNow(second, b)).isEmpty();
                return null;
            });
            assertThat(leftovers(b)).as("the inner call released the key it took").isEmpty();
            assertThat(lockKeyExists(a)).as("but not the one it joined").isTrue();
            return null;
        });

        assertThat(leftovers(a)).isEmpty();
    }

    @Test
    void severalKeysInOpposingOrdersFromTwoInstancesNeverDeadlock() {
        String a = name() + ":a";
        String b = name() + ":b";
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        Supplier<Object> section = () -> {
            if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            Thread.yield();
            inside.decrementAndGet();
            return null;
        };
        GuardedWork inFirst = first.guardedWork();
        GuardedWork inSecond = second.guardedWork();
        Future<Integer> ab = threads.submit(() -> repeat(10, () -> inFirst.runOnBothPatiently(a, b, section)));
        Future<Integer> ba = threads.submit(() -> repeat(10, () -> inSecond.runOnBothPatiently(b, a, section)));

        assertThat(get(ab) + get(ba)).isEqualTo(20);
        assertThat(overlaps).hasValue(0);
        assertThat(leftovers(a)).isEmpty();
        assertThat(leftovers(b)).isEmpty();
    }

    // ------------------------------------------------------------------------------------------
    // interrupts

    @Test
    void anInterruptBeforeTheCallFailsTheAcquisitionKeepsTheFlagAndLeavesNothingInRedis() {
        String name = name();
        AtomicBoolean invoked = new AtomicBoolean();

        Thread.currentThread().interrupt();
        Throwable viaService = catchThrowable(() -> first.lockService().tryLock(name, TTL, Duration.ZERO));
        boolean serviceKeptTheFlag = Thread.interrupted();
        Thread.currentThread().interrupt();
        Throwable viaAnnotation = catchThrowable(() -> first.guardedWork().run(name, () -> invoked.getAndSet(true)));
        boolean annotationKeptTheFlag = Thread.interrupted();

        assertThat(viaService).isInstanceOf(LockAcquisitionException.class)
            .hasCauseInstanceOf(InterruptedException.class);
        assertThat(serviceKeptTheFlag).isTrue();
        assertThat(viaAnnotation).isInstanceOf(LockAcquisitionException.class)
            .hasCauseInstanceOf(InterruptedException.class);
        assertThat(annotationKeptTheFlag).isTrue();
        assertThat(invoked).as("the method ran").isFalse();
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void anInterruptDuringTheWaitEndsItKeepsTheFlagAndLeavesNothingInRedis() {
        String name = name();
        LockHandle holder = first.lockService().lock(name, TTL, Duration.ZERO);
        AtomicReference<Thread> waiterThread = new AtomicReference<>();
        AtomicBoolean flagKept = new AtomicBoolean();
        Future<Throwable> waiter = threads.submit(() -> {
            waiterThread.set(Thread.currentThread());
            Throwable thrown = catchThrowable(() -> second.lockService().lock(name, TTL, LONG_WAIT));
            flagKept.set(Thread.interrupted());
            return thrown;
        });
        awaitWaiting(name, 1, waiter);

        waiterThread.get().interrupt();

        assertThat(get(waiter)).isInstanceOf(LockAcquisitionException.class)
            .hasCauseInstanceOf(InterruptedException.class);
        assertThat(flagKept).isTrue();
        assertThat(holder.isHeld()).isTrue();
        assertThat(holder.release()).isTrue();
        assertThat(leftovers(name)).as("no lock and no queue entry of the waiter").isEmpty();
    }

    @Test
    void releaseAndTheFirstFencingTokenCompleteOnAnInterruptedThread() {
        String name = name();
        LockHandle held = first.lockService().lock(name, TTL, Duration.ZERO);

        Thread.currentThread().interrupt();
        long token = has(Capability.FENCING) ? held.fencingToken() : 1;
        boolean released = held.release();
        boolean flagKept = Thread.interrupted();

        assertThat(token).isPositive();
        assertThat(released).isTrue();
        assertThat(flagKept).isTrue();
        assertThat(leftovers(name)).isEmpty();
    }

    // ------------------------------------------------------------------------------------------
    // faults

    @Test
    void anAcquireWhoseReplyWasLostEndsHeldOrLeavesNothingBehind() {
        requires(Capability.FAULT_PROXY);
        String name = name();
        LockService service = proxiedInstance().lockService();
        FaultRule lostReply = proxy.onNext(RedisCommandMatcher.named("SET").withArgument(1, keyspace().lockKey(name)))
            .dropReplyAndClose();

        Optional<LockHandle> acquired;
        try {
            acquired = service.tryLock(name, TTL, Duration.ZERO);
        }
        catch (LockBackendException ex) {
            assertThat(capabilities()).as("a client that re-sends the SET acquires")
                .doesNotContain(Capability.CLIENT_RESENDS);
            // The SET ran, but this client did not re-send it: the call failed, and its
            // undo frees the key.
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(leftovers(name)).isEmpty());
            tryNow(second, name).orElseThrow().release();
            return;
        }
        assertThat(lostReply.triggerCount()).as("the fault hit").isEqualTo(1);
        assertThat(acquired).isPresent();
        assertThat(acquired.get().isHeld()).isTrue();
        assertThat(tryNow(second, name)).isEmpty();
        assertThat(acquired.get().release()).isTrue();
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void aReleaseWhoseReplyNeverCameIsCompletedOnceRedisAnswersAgain() {
        requires(Capability.FAULT_PROXY);
        String name = name();
        LockHandle held = proxiedInstance().lockService().lock(name, TTL, Duration.ZERO);
        proxy.blackhole();

        Throwable thrown = catchThrowable(held::release);

        assertThat(thrown).isInstanceOf(LockBackendException.class);
        assertThat(lockKeyExists(name)).as("Redis never saw the release").isTrue();
        proxy.heal();
        await().atMost(PATIENCE).until(() -> leftovers(name).isEmpty());
        assertThat(tryNow(second, name)).isPresent();
    }

    @Test
    void anAcquireWhoseReplyNeverCameIsUndoneOnceRedisAnswersAgain() {
        requires(Capability.FAULT_PROXY);
        String name = name();
        LockService service = proxiedInstance().lockService();
        proxy.onNext(RedisCommandMatcher.named("SET").withArgument(1, keyspace().lockKey(name))).dropReplyAndHang();
        long setsBefore = redisStore().setCalls(name);

        Throwable thrown = catchThrowable(() -> service.tryLock(name, TTL, Duration.ZERO));

        assertThat(thrown).isInstanceOf(LockBackendException.class);
        // Counted by Redis rather than seen in the key: the undo starts at once in the
        // background, and
        // on a pooled driver (Jedis) it goes out on a healthy connection and may already
        // have run.
        assertThat(redisStore().setCalls(name)).as("Redis ran the SET").isGreaterThan(setsBefore);
        proxy.heal();
        await().atMost(PATIENCE).until(() -> leftovers(name).isEmpty());
        assertThat(tryNow(second, name)).isPresent();
    }

    @Test
    void aHolderCutOffFromRedisUntilItsLeaseRanOutIsToldItLostIt() {
        requires(Capability.FAULT_PROXY);
        String name = name();
        ContractApplication instance = proxiedInstance();
        LockHandle held = instance.lockService()
            .lock(LockRequest.of(name).withTtl(Duration.ofMillis(1500)).withWaitTime(Duration.ZERO).withWatchdog(true));
        proxy.blackhole();

        LockHandle next = await().atMost(PATIENCE).until(() -> tryNow(second, name).orElse(null), Objects::nonNull);

        await().atMost(PATIENCE).until(held::isLost);
        assertThat(held.isHeld()).isFalse();
        await().atMost(PATIENCE).until(() -> lostIn(instance, name).isPresent());
        proxy.heal();
        assertThat(next.isHeld()).isTrue();
        assertThat(next.release()).isTrue();
    }

    @Test
    void anUnreachableRedisFailsTheCallWithLockBackendExceptionAndTheMethodNeverRuns() {
        requires(Capability.FAULT_PROXY);
        String name = name();
        ContractApplication instance = proxiedInstance();
        AtomicBoolean invoked = new AtomicBoolean();
        proxy.blackhole();

        Throwable viaService = catchThrowable(() -> instance.lockService().tryLock(name, TTL, Duration.ZERO));
        Throwable viaAnnotation = catchThrowable(
                () -> instance.guardedWork().tryRun(name, () -> invoked.getAndSet(true)));

        assertThat(viaService).isInstanceOf(LockBackendException.class);
        assertThat(viaAnnotation).isInstanceOf(LockBackendException.class);
        assertThat(invoked).as("the guarded method ran").isFalse();
        proxy.heal();
        await().atMost(PATIENCE).until(() -> leftovers(name).isEmpty());
    }

    // ------------------------------------------------------------------------------------------
    // shutdown

    /**
     * "Print nothing noisy": a WARN at shutdown is one an operator learns to ignore, with
     * the real ones.
     */
    @Test
    protected void anApplicationThatUsedLocksShutsDownWithoutWarnings() {
        List<String> warnings = warningsWhile(() -> {
            ContractApplication instance = startApplication(store.applicationProperties());
            warmUp(instance, second, has(Capability.FENCING));
            instance.close();
        });

        assertThat(warnings).isEmpty();
    }

    /**
     * A deployment that is rolled back at once, or a test's context: closed while the
     * lock still connects.
     */
    @Test
    protected void anApplicationClosedRightAfterItStartedShutsDownWithoutWarnings() {
        List<String> warnings = warningsWhile(() -> {
            startApplication(store.applicationProperties()).close();
            // Anything still running in the background logs after close() returned.
            await().pollDelay(Duration.ofMillis(500)).until(() -> true);
        });

        assertThat(warnings).isEmpty();
    }

    /**
     * The WARN and ERROR lines any logger writes while {@code action} runs, as "logger:
     * message".
     */
    private static List<String> warningsWhile(Runnable action) {
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        Logger root = (Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
        root.addAppender(events);
        try {
            action.run();
        }
        finally {
            root.detachAppender(events);
        }
        return events.list.stream()
            .filter(event -> event.getLevel().isGreaterOrEqual(Level.WARN))
            .map(event -> event.getLoggerName() + ": " + event.getFormattedMessage())
            .toList();
    }

    // ------------------------------------------------------------------------------------------
    // minimum hold and extension

    @Test
    void aReleaseBeforeTheMinimumHoldLeavesTheLockHeldUntilItEnds() {
        assumeTrue(has(Capability.MIN_HOLD), "the backend keeps no minimum hold");
        String name = name();
        Duration minHold = Duration.ofMillis(1500);
        long before = System.nanoTime();
        LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withMinHold(minHold));

        assertThat(held.release()).as("a release within the minimum hold still releases our lock").isTrue();

        assertThat(held.isHeld()).as("the handle counts as released at once").isFalse();
        assertThat(held.release()).as("release stays idempotent").isFalse();
        assertThat(pttl(name)).as("the lease was cut to what is left of the minimum hold, never lengthened")
            .isBetween(1L, minHold.toMillis());
        assertThat(tryNow(second, name)).as("another instance is refused until the minimum hold ends").isEmpty();
        LockHandle next = await().atMost(PATIENCE).until(() -> tryNow(second, name).orElse(null), Objects::nonNull);
        assertThat(Duration.ofNanos(System.nanoTime() - before)).as("the lock stayed held for the minimum hold")
            .isGreaterThanOrEqualTo(minHold);
        assertThat(held.isLost()).as("a lock held out its minimum hold is not lost").isFalse();
        assertThat(lostIn(first, name)).isEmpty();
        assertThat(next.release()).isTrue();
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void aWatchdogRenewedLeaseIsNotRenewedOnceReleasedWithinItsMinimumHold() {
        assumeTrue(has(Capability.MIN_HOLD), "the backend keeps no minimum hold");
        String name = name();
        Duration ttl = Duration.ofMillis(900);
        LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(ttl).withWaitTime(Duration.ZERO).withWatchdog(true).withMinHold(ttl));
        // Past the first renewal (every 300 ms), well within the minimum hold.
        await().pollDelay(Duration.ofMillis(450)).atMost(PATIENCE).until(held::isHeld);

        assertThat(held.release()).isTrue();

        assertThat(pttl(name)).as("cut to what is left of the minimum hold; a renewal after the release would set 900")
            .isBetween(1L, 600L);
        await().atMost(PATIENCE).until(() -> !lockKeyExists(name));
        assertThat(held.isLost()).as("a lease left to expire after its release is not lost").isFalse();
        assertThat(tryNow(second, name)).isPresent().get().satisfies(next -> assertThat(next.release()).isTrue());
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void aReleaseAfterTheMinimumHoldFreesTheLockAtOnce() {
        assumeTrue(has(Capability.MIN_HOLD), "the backend keeps no minimum hold");
        String name = name();
        LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withMinHold(Duration.ofMillis(200)));
        await().pollDelay(Duration.ofMillis(300)).atMost(PATIENCE).until(held::isHeld);

        assertThat(held.release()).isTrue();

        assertThat(lockKeyExists(name)).as("deleted, as without a minimum hold").isFalse();
        assertThat(tryNow(second, name)).isPresent().get().satisfies(next -> assertThat(next.release()).isTrue());
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void aWaiterTakesALockReleasedWithinItsMinimumHoldOnceTheHoldEnds() {
        assumeTrue(has(Capability.MIN_HOLD), "the backend keeps no minimum hold");
        String name = name();
        Duration minHold = Duration.ofMillis(1200);
        long before = System.nanoTime();
        LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withMinHold(minHold));
        Future<LockHandle> waiter = threads.submit(() -> second.lockService().lock(name, TTL, LONG_WAIT));
        awaitWaiting(name, 1, waiter);

        assertThat(held.release()).isTrue();

        LockHandle next = get(waiter);
        assertThat(Duration.ofNanos(System.nanoTime() - before)).as("the waiter got it only after the minimum hold")
            .isGreaterThanOrEqualTo(minHold);
        assertThat(next.isHeld()).isTrue();
        assertThat(next.release()).isTrue();
        assertThat(leftovers(name)).as("no lock or queue entry left behind").isEmpty();
    }

    @Test
    void aMinimumHoldLongerThanTheTtlIsRefusedBeforeAnythingIsSent() {
        String name = name();
        LockRequest request = LockRequest.of(name)
            .withTtl(Duration.ofSeconds(1))
            .withWaitTime(Duration.ZERO)
            .withMinHold(Duration.ofSeconds(2));

        Throwable refused = catchThrowable(() -> first.lockService().lock(request));

        if (has(Capability.MIN_HOLD)) {
            assertThat(refused).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(name)
                .hasMessageContaining("PT2S")
                .hasMessageContaining("longer than its ttl");
        }
        else {
            assertThat(first.lockService().supportsMinHold()).isFalse();
            assertThat(refused).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining(name)
                .hasMessageContaining("LeaseAdjustingLockBackend");
        }
        assertThat(leftovers(name)).as("nothing was taken").isEmpty();
    }

    @Test
    void extendSetsTheRemainingLeaseLongerOrShorterWhileTheLockIsOurs() {
        String name = name();
        LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(Duration.ofSeconds(10)).withWaitTime(Duration.ZERO).withWatchdog(false));
        if (!has(Capability.MIN_HOLD)) {
            assertThatThrownBy(() -> held.extend(Duration.ofSeconds(20)))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining(name);
            assertThat(held.release()).isTrue();
            return;
        }

        assertThat(held.extend(Duration.ofSeconds(60))).isTrue();
        assertThat(pttl(name)).as("lengthened past the ttl").isGreaterThan(10_000L);
        assertThat(held.extend(Duration.ofSeconds(3))).isTrue();
        assertThat(pttl(name)).as("shortened").isBetween(1L, 3_000L);
        assertThat(held.isHeld()).isTrue();
        assertThat(tryNow(second, name)).as("still ours").isEmpty();

        assertThat(held.release()).isTrue();
        assertThat(held.extend(Duration.ofSeconds(60))).as("a released lock is not extended").isFalse();
        assertThat(leftovers(name)).as("and not recreated").isEmpty();
    }

    @Test
    void extendNeverTouchesTheNextOwnersLease() {
        assumeTrue(has(Capability.MIN_HOLD), "the backend cannot extend a lease");
        String name = name();
        LockHandle ours = first.lockService()
            .lock(LockRequest.of(name).withTtl(Duration.ofMillis(500)).withWaitTime(Duration.ZERO).withWatchdog(false));
        LockHandle theirs = await().atMost(PATIENCE).until(() -> tryNow(second, name).orElse(null), Objects::nonNull);

        assertThat(ours.extend(Duration.ofMinutes(5))).as("no longer ours").isFalse();

        assertThat(ours.isHeld()).isFalse();
        assertThat(pttl(name)).as("the next owner's lease is as it set it").isBetween(1L, TTL.toMillis());
        assertThat(theirs.isHeld()).isTrue();
        assertThat(theirs.release()).isTrue();
        assertThat(leftovers(name)).isEmpty();
    }

    @Test
    void aWatchdogRenewsAnExtendedLeaseToItsNewLength() {
        assumeTrue(has(Capability.MIN_HOLD), "the backend cannot extend a lease");
        String name = name();
        LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(Duration.ofMillis(600)).withWaitTime(Duration.ZERO).withWatchdog(true));

        assertThat(held.extend(Duration.ofSeconds(20))).isTrue();

        // Past several of the old renewal periods: a renewal to the old ttl would show as
        // a lease of 600 ms or less.
        await().during(Duration.ofMillis(1200)).atMost(PATIENCE).until(() -> pttl(name) > 600);
        assertThat(held.isHeld()).isTrue();
        assertThat(held.release()).isTrue();
        assertThat(leftovers(name)).isEmpty();
    }

    // ------------------------------------------------------------------------------------------
    // helpers

    /** The first application instance, for a subclass's own tests of its topology. */
    protected final ContractApplication firstInstance() {
        return first;
    }

    /** The second application instance. */
    protected final ContractApplication secondInstance() {
        return second;
    }

    /** Skips the test unless the backend declares {@code capability}. */
    protected final void requires(Capability capability) {
        assumeTrue(has(capability), () -> getClass().getSimpleName() + " does not declare " + capability);
    }

    /**
     * Whether the backend declares {@code capability}, for a test that checks more where
     * it can.
     */
    protected final boolean has(Capability capability) {
        return capabilities().contains(capability);
    }

    /** A lock name of this test's own. */
    protected final String name() {
        return testName + "-" + names.incrementAndGet();
    }

    /** The Redis this class started, for a subclass's own tests of its topology. */
    protected final ContractRedis redis() {
        return redisStore().redis();
    }

    /**
     * The store as Redis, for the tests that need Redis itself: each requires
     * {@link Capability#FAULT_PROXY}.
     */
    private RedisContractStore redisStore() {
        if (store instanceof RedisContractStore redisStore) {
            return redisStore;
        }
        throw new IllegalStateException(getClass().getSimpleName() + " runs on " + store + ", not on Redis");
    }

    private ContractApplication startApplication(List<String> storeProperties, String... more) {
        List<String> properties = new ArrayList<>(storeProperties);
        properties.addAll(applicationProperties());
        properties.addAll(List.of(more));
        List<Class<?>> sources = new ArrayList<>(List.of(store.applicationSources()));
        sources.addAll(List.of(applicationSources()));
        return ContractApplication.start(properties, sources.toArray(Class<?>[]::new));
    }

    /**
     * A third instance that reaches Redis through a fault proxy, started on first use,
     * connected and warmed up.
     */
    private ContractApplication proxiedInstance() {
        if (proxied == null) {
            proxy = redisStore().redis().startFaultProxy();
            proxied = startApplication(redisStore().redis().springPropertiesThrough(proxy),
                    "distributed-lock.operation-timeout=500ms");
        }
        // Connected, and every script the faults could hit cached, so a fault hits the
        // command it names.
        String warmUp = name();
        await().atMost(PATIENCE).ignoreExceptions().until(() -> {
            LockRequest request = LockRequest.of(warmUp).withTtl(TTL).withWaitTime(Duration.ZERO);
            try (LockHandle held = proxied.lockService()
                .lock(has(Capability.FENCING) ? request.withFencingToken() : request)) {
                return held.isHeld();
            }
        });
        return proxied;
    }

    private static Optional<LockHandle> tryNow(ContractApplication instance, String name) {
        return instance.lockService().tryLock(name, TTL, Duration.ZERO);
    }

    private static Optional<LockLostEvent> lostIn(ContractApplication instance, String name) {
        return instance.lostLeases().stream().filter(event -> event.getKey().equals(name)).findFirst();
    }

    /**
     * Returns once {@code waiter} is waiting: queued in Redis, or with no queue, still
     * waiting a while later.
     */
    private void awaitWaiting(String name, int queued, Future<?> waiter) {
        if (has(Capability.WAIT_QUEUE)) {
            await().atMost(PATIENCE).until(() -> waiter.isDone() || queueLength(name) >= queued);
        }
        else {
            await().during(Duration.ofMillis(300)).atMost(PATIENCE).until(() -> !waiter.isDone());
        }
        assertThat(waiter.isDone()).as("the waiter is still waiting").isFalse();
    }

    private boolean lockKeyExists(String name) {
        return store.isHeld(name);
    }

    private long pttl(String name) {
        return store.leaseLeftMillis(name);
    }

    private void deleteBehindTheHoldersBack(String name) {
        store.takeAway(name);
    }

    private long queueLength(String name) {
        return store.queueLength(name);
    }

    /**
     * What lock {@code name} left in the store other than counters meant to outlive it: a
     * lock, a queue entry.
     */
    private Set<String> leftovers(String name) {
        return store.leftovers(name);
    }

    private static int repeat(int times, Runnable call) {
        for (int i = 0; i < times; i++) {
            call.run();
        }
        return times;
    }

    private static <T> T get(Future<T> future) {
        try {
            return future.get(2, TimeUnit.MINUTES);
        }
        catch (ExecutionException ex) {
            throw new AssertionError("the call failed", ex.getCause());
        }
        catch (InterruptedException | TimeoutException ex) {
            future.cancel(true);
            throw new AssertionError("the call did not complete", ex);
        }
    }

}
