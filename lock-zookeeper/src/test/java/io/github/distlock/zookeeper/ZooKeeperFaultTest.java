package io.github.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockContext;
import io.github.distlock.core.LockListener;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.testsupport.zookeeper.PartitionProxy;
import io.github.distlock.testsupport.zookeeper.ZooKeeperTestEnsemble;

/**
 * Real faults of a real ensemble (three processes), with the invariants checked in each:
 * never two holders (what each JVM believes, sampled throughout), fencing tokens strictly
 * increasing from holder to holder, and a holder that lost its lock is told. Two
 * "instances" are two lock services, each on its own client and session, as two JVMs
 * would be.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ZooKeeperFaultTest {

    private static final Duration SESSION = Duration.ofSeconds(10);

    private static final Duration PATIENCE = Duration.ofSeconds(90);

    private ZooKeeperTestEnsemble ensemble;

    private ExecutorService threads;

    private final List<Instance> instances = new ArrayList<>();

    private final AtomicInteger names = new AtomicInteger();

    @BeforeAll
    void startEnsemble() {
        ensemble = ZooKeeperTestEnsemble.start();
        threads = Executors.newCachedThreadPool();
    }

    @AfterAll
    void stopEnsemble() {
        threads.shutdownNow();
        if (ensemble != null) {
            ensemble.close();
        }
    }

    @BeforeEach
    void healEnsemble() {
        ensemble.heal();
    }

    @AfterEach
    void closeInstances() {
        instances.forEach(Instance::close);
        instances.clear();
    }

    @Test
    void aKilledLeaderLeavesHeldLocksHeldAndTheWaiterGetsTheLockWithALargerTokenOnRelease() throws Exception {
        String name = name();
        Instance a = instance();
        Instance b = instance();
        Duration ttl = SESSION;
        LockHandle held = a.service
            .lock(LockRequest.of(name).withTtl(ttl).withWaitTime(Duration.ZERO).withFencingToken());
        long heldToken = held.fencingToken();
        Future<LockHandle> waiter = threads
            .submit(() -> b.service.lock(LockRequest.of(name).withTtl(ttl).withWaitTime(PATIENCE).withFencingToken()));
        await().atMost(PATIENCE).until(() -> b.backend.inspect(b.backend.lockKey(name)).queueLength() == 1);
        InspectableLockBackend.LockState state = b.backend.inspect(b.backend.lockKey(name));
        assertThat(state.held()).isTrue();
        assertThat(state.lastFencingToken()).as("the holder's czxid").isEqualTo(heldToken);
        assertThat(state.leaseLeftMillis()).isPositive().isLessThanOrEqualTo(ttl.toMillis());
        TwoHolders monitor = TwoHolders.watch(threads, held, waiter);

        ZooKeeperTestEnsemble.Member leader = ensemble.leader();
        leader.kill();
        ZooKeeperTestEnsemble.Member next = ensemble.awaitLeader(PATIENCE);
        // Renewed through the new leader: the lease outlived the election.
        long renewalsBefore = a.renewals.get();
        await().atMost(PATIENCE).until(() -> a.renewals.get() > renewalsBefore);

        assertThat(next).isNotSameAs(leader);
        assertThat(held.isHeld()).as("the holder kept its lock through the election").isTrue();
        assertThat(held.isLost()).isFalse();
        assertThat(waiter.isDone()).as("the waiter still waits").isFalse();
        assertThat(held.release()).isTrue();
        LockHandle handedOver = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(handedOver.fencingToken()).as("the next holder's token").isGreaterThan(heldToken);
        assertThat(handedOver.release()).isTrue();
        assertThat(monitor.stop()).as("samples with two holders").isZero();
        assertThat(a.lost).isEmpty();
        assertThat(b.lost).isEmpty();
    }

    @Test
    void withAMinorityDownLocksStillExcludeEachOtherAndTokensStrictlyIncrease() throws Exception {
        String name = name();
        Instance a = instance();
        Instance b = instance();
        ensemble.followers().get(0).kill();

        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        List<Future<Integer>> callers = new ArrayList<>();
        for (Instance instance : List.of(a, b)) {
            for (int thread = 0; thread < 2; thread++) {
                callers.add(threads.submit(() -> {
                    int done = 0;
                    for (int i = 0; i < 10; i++) {
                        try (LockHandle held = instance.service
                            .lock(LockRequest.of(name).withTtl(SESSION).withWaitTime(PATIENCE).withFencingToken())) {
                            if (!inside.compareAndSet(false, true)) {
                                overlaps.incrementAndGet();
                            }
                            tokens.add(held.fencingToken());
                            Thread.yield();
                            inside.set(false);
                        }
                        done++;
                    }
                    return done;
                }));
            }
        }
        int done = 0;
        for (Future<Integer> caller : callers) {
            done += caller.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        }

        assertThat(done).isEqualTo(40);
        assertThat(overlaps).as("holders that found another inside").hasValue(0);
        assertThat(tokens).as("tokens in the order the holders held").hasSize(40).isSorted().doesNotHaveDuplicates();
        assertThat(a.lost).isEmpty();
        assertThat(b.lost).isEmpty();
    }

    @Test
    void withTheMajorityDownACallFailsClearlyNoGuardedWorkRunsAndTheHolderIsToldItLostTheLock() throws Exception {
        String name = name();
        Instance a = instance();
        Instance b = instance();
        Duration ttl = Duration.ofSeconds(3);
        LockHandle held = a.service
            .lock(LockRequest.of(name).withTtl(ttl).withWaitTime(Duration.ZERO).withFencingToken());
        long heldToken = held.fencingToken();
        List<LockHandle> told = new CopyOnWriteArrayList<>();
        held.onLost(told::add);

        ZooKeeperTestEnsemble.Member leader = ensemble.leader();
        ZooKeeperTestEnsemble.Member follower = ensemble.followers().get(0);
        leader.kill();
        follower.kill();
        AtomicBoolean ran = new AtomicBoolean();
        Throwable refused = catchThrowable(
                () -> b.service.callLocked(name() + "-other", ttl, Duration.ZERO, () -> ran.getAndSet(true)));
        Throwable contended = catchThrowable(
                () -> b.service.callLocked(name, ttl, Duration.ofSeconds(1), () -> ran.getAndSet(true)));

        assertThat(refused).isInstanceOf(LockBackendException.class)
            .hasMessageContaining(ensemble.connectString())
            .hasMessageContaining(ZooKeeperLockSettings.OPERATION_TIMEOUT_PROPERTY);
        assertThat(contended).isInstanceOf(LockBackendException.class);
        assertThat(ran).as("a guarded action ran without its lock").isFalse();
        InspectableLockBackend.NodeReachability down = b.backend.ping().nodes().get(0);
        assertThat(down.reachable()).as("the health view of an ensemble without a quorum").isFalse();
        assertThat(down.error()).contains(ZooKeeperLockSettings.OPERATION_TIMEOUT_PROPERTY);
        await().atMost(PATIENCE).until(held::isLost);
        assertThat(held.isHeld()).isFalse();
        await().atMost(PATIENCE).until(() -> told.contains(held) && a.lost.contains(name));

        leader.restart();
        follower.restart();
        ensemble.awaitServing(PATIENCE);
        await().atMost(PATIENCE).until(() -> b.backend.ping().reachable());
        LockHandle next = await().atMost(PATIENCE)
            .ignoreExceptions()
            .until(() -> b.service.tryLock(LockRequest.of(name).withTtl(ttl).withFencingToken()).orElse(null),
                    handle -> handle != null);
        assertThat(next.fencingToken()).as("the next holder's token").isGreaterThan(heldToken);
        assertThat(next.release()).isTrue();
    }

    @Test
    void aHolderCutOffFromTheEnsembleIsToldItLostTheLockBeforeTheWaiterGetsItWithALargerToken() throws Exception {
        String name = name();
        Duration shortSession = Duration.ofSeconds(4);
        try (PartitionProxy partition = PartitionProxy.start(ensemble)) {
            Instance a = instance(partition.connectString(), shortSession);
            Instance b = instance();
            LockHandle held = a.service
                .lock(LockRequest.of(name).withTtl(shortSession).withWaitTime(Duration.ZERO).withFencingToken());
            long heldToken = held.fencingToken();
            List<LockHandle> told = new CopyOnWriteArrayList<>();
            held.onLost(told::add);
            Future<LockHandle> waiter = threads.submit(() -> b.service
                .lock(LockRequest.of(name).withTtl(shortSession).withWaitTime(PATIENCE).withFencingToken()));
            await().atMost(PATIENCE).until(() -> b.backend.inspect(b.backend.lockKey(name)).queueLength() == 1);
            TwoHolders monitor = TwoHolders.watch(threads, held, waiter);

            partition.cut();
            LockHandle next = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);

            await().atMost(PATIENCE).until(() -> told.contains(held) && a.lost.contains(name));
            assertThat(held.isHeld()).isFalse();
            assertThat(held.isLost()).isTrue();
            assertThat(next.fencingToken()).as("the next holder's token").isGreaterThan(heldToken);
            assertThat(monitor.stop()).as("samples with two holders").isZero();
            partition.heal();
            assertThat(next.isHeld()).isTrue();
            assertThat(next.release()).isTrue();
        }
    }

    @Test
    void aWaiterCutOffForLessThanItsSessionKeepsItsPlaceAndGetsTheLockReleasedMeanwhile() throws Exception {
        String name = name();
        try (PartitionProxy partition = PartitionProxy.start(ensemble)) {
            Instance a = instance();
            Instance b = instance(partition.connectString(), SESSION);
            LockHandle held = a.service
                .lock(LockRequest.of(name).withTtl(SESSION).withWaitTime(Duration.ZERO).withFencingToken());
            long heldToken = held.fencingToken();
            Future<LockHandle> waiter = threads.submit(() -> b.service
                .lock(LockRequest.of(name).withTtl(SESSION).withWaitTime(PATIENCE).withFencingToken()));
            await().atMost(PATIENCE).until(() -> a.backend.inspect(a.backend.lockKey(name)).queueLength() == 1);

            partition.cut();
            // Long enough for the waiter's re-checks to go unanswered, short of its
            // session.
            await().pollDelay(Duration.ofSeconds(4)).atMost(PATIENCE).until(() -> true);
            assertThat(held.release()).isTrue();
            assertThat(waiter.isDone()).as("the waiter waits on, cut off").isFalse();
            partition.heal();

            LockHandle next = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            assertThat(next.fencingToken()).isGreaterThan(heldToken);
            assertThat(next.release()).isTrue();
        }
    }

    @Test
    void aTtlLongerThanTheSessionIsRefusedWithTheFix() {
        Instance a = instance();

        Throwable thrown = catchThrowable(() -> a.service.tryLock(name(), SESSION.plusSeconds(1), Duration.ZERO));

        assertThat(thrown).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining(ZooKeeperLockSettings.SESSION_TIMEOUT_PROPERTY)
            .hasMessageContaining("Lower the ttl to at most PT10S");
    }

    private String name() {
        return "fault-" + names.incrementAndGet();
    }

    private Instance instance() {
        return instance(ensemble.connectString(), SESSION);
    }

    private Instance instance(String connectString, Duration session) {
        Instance instance = new Instance(ZooKeeperLockSettings.of(connectString)
            .withSessionTimeout(session)
            .withOperationTimeout(Duration.ofSeconds(3)));
        instances.add(instance);
        return instance;
    }

    /** A lock service on a backend with its own client and session, as one JVM has. */
    static final class Instance implements AutoCloseable {

        final ZooKeeperLockBackend backend;

        final LeaseWatchdog watchdog;

        final DefaultLockService service;

        /** The names whose leases this instance's listeners heard were lost. */
        final List<String> lost = new CopyOnWriteArrayList<>();

        final AtomicInteger renewals = new AtomicInteger();

        Instance(ZooKeeperLockSettings settings) {
            backend = ZooKeeperLockBackend.connect(settings);
            LockWaiters waiters = new LockWaiters();
            waiters.notificationsFrom(backend);
            backend.deliverHandOversTo(waiters);
            watchdog = new LeaseWatchdog(backend, 1.0 / 3);
            service = new DefaultLockService(backend, watchdog, new LockDefaults(SESSION, Duration.ZERO, true), waiters,
                    new LockListener() {

                        @Override
                        public void renewed(LockContext lock, boolean renewed) {
                            if (renewed) {
                                renewals.incrementAndGet();
                            }
                        }

                        @Override
                        public void leaseLost(LockContext lock, LeaseLossReason reason, String description) {
                            lost.add(lock.key());
                        }
                    });
        }

        @Override
        public void close() {
            service.close();
            watchdog.close();
            backend.close();
        }

    }

    /**
     * Samples, every few milliseconds, whether the first holder and the waiter's handle
     * both believe they hold the lock.
     */
    static final class TwoHolders {

        private final AtomicBoolean running = new AtomicBoolean(true);

        private final AtomicInteger violations = new AtomicInteger();

        private Future<?> sampler;

        static TwoHolders watch(ExecutorService threads, LockHandle first, Future<LockHandle> second) {
            TwoHolders monitor = new TwoHolders();
            monitor.sampler = threads.submit(() -> {
                while (monitor.running.get()) {
                    Optional<LockHandle> other = second.isDone() && !second.isCancelled()
                            ? Optional.ofNullable(getQuietly(second)) : Optional.empty();
                    if (first.isHeld() && other.isPresent() && other.get().isHeld()) {
                        monitor.violations.incrementAndGet();
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
                }
            });
            return monitor;
        }

        int stop() throws Exception {
            running.set(false);
            sampler.get(10, TimeUnit.SECONDS);
            return violations.get();
        }

        private static LockHandle getQuietly(Future<LockHandle> future) {
            try {
                return future.get();
            }
            catch (Exception ex) {
                return null;
            }
        }

    }

}
