package io.github.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.InspectableLockBackend.Reachability;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.testsupport.EtcdTestCluster;

/**
 * The etcd backend under the faults of a real 3-member cluster of {@code etcd} processes,
 * each test on a fresh cluster, with two clients of their own (two backends, two lock
 * services, as two application instances). Each checks the invariants: never two holders,
 * fencing tokens strictly increasing in the order the lock was held, and a holder that
 * lost its lease is told.
 */
class EtcdFaultTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private EtcdTestCluster etcd;

    private final List<Client> clients = new ArrayList<>();

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeEach
    void startCluster() {
        etcd = EtcdTestCluster.start();
    }

    @AfterEach
    void stopEverything() {
        threads.shutdownNow();
        clients.forEach(Client::close);
        etcd.close();
    }

    @Test
    void theLeaderKilledWhileALockIsHeldAndAwaitedKeepsItsHolderAndHandsItToTheWaiterAfterwards() throws Exception {
        Client a = client();
        Client b = client();
        LockHandle held = a.locks.lock(
                LockRequest.of("ledger").withTtl(Duration.ofSeconds(3)).withWaitTime(Duration.ZERO).withWatchdog(true));
        long heldToken = held.fencingToken();
        Future<LockHandle> waiter = threads.submit(() -> b.locks
            .lock(LockRequest.of("ledger").withTtl(Duration.ofSeconds(3)).withWaitTime(Duration.ofSeconds(90))));
        await().atMost(PATIENCE).until(() -> b.backend.inspect(b.backend.lockKey("ledger")).queueLength() >= 1);

        int leader = etcd.leader();
        etcd.kill(leader);
        assertThat(etcd.awaitLeader()).isNotEqualTo(leader);

        // Longer than the lease: the watchdog kept it through the election, and the
        // waiter still waits.
        await().during(Duration.ofSeconds(4))
            .atMost(PATIENCE)
            .until(() -> held.isHeld() && !held.isLost() && !waiter.isDone());
        assertThat(held.release()).isTrue();
        LockHandle next = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(next.isHeld()).isTrue();
        assertThat(next.fencingToken()).as("the next holder's token").isGreaterThan(heldToken);
        assertThat(next.release()).isTrue();
    }

    @Test
    void contendingClientsNeverOverlapAndTheirTokensIncreaseAcrossALeaderKill() throws Exception {
        List<Client> contenders = List.of(client(EtcdSettings.DEFAULT_OPERATION_TIMEOUT),
                client(EtcdSettings.DEFAULT_OPERATION_TIMEOUT));
        AtomicBoolean inSection = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger failedCalls = new AtomicInteger();
        List<Long> tokensInHoldingOrder = new CopyOnWriteArrayList<>();
        int callsPerThread = 12;
        List<Future<Integer>> callers = new ArrayList<>();
        for (Client client : contenders) {
            for (int t = 0; t < 2; t++) {
                callers.add(threads.submit(() -> {
                    int sections = 0;
                    for (int i = 0; i < callsPerThread; i++) {
                        LockHandle lock;
                        try {
                            lock = client.locks.lock(LockRequest.of("counter")
                                .withTtl(Duration.ofSeconds(6))
                                .withWaitTime(Duration.ofSeconds(60))
                                .withFencingToken());
                        }
                        catch (LockAcquisitionException unavailable) {
                            // The election can fail a call (no answer in time, or a grant
                            // whose
                            // lease had run out by the time it came): its work then does
                            // not run.
                            failedCalls.incrementAndGet();
                            continue;
                        }
                        try {
                            if (!inSection.compareAndSet(false, true)) {
                                overlaps.incrementAndGet();
                            }
                            tokensInHoldingOrder.add(lock.fencingToken());
                            Thread.sleep(20);
                            inSection.set(false);
                            sections++;
                        }
                        finally {
                            try {
                                lock.release();
                            }
                            catch (LockBackendException unconfirmed) {
                                // Retried in the background; the next holder waits for it
                                // or for the lease.
                            }
                        }
                    }
                    return sections;
                }));
            }
        }
        await().atMost(PATIENCE).until(() -> tokensInHoldingOrder.size() >= 8);
        int leader = etcd.leader();
        etcd.kill(leader);
        etcd.awaitLeader();

        int sections = 0;
        for (Future<Integer> caller : callers) {
            sections += caller.get(3, TimeUnit.MINUTES);
        }

        assertThat(overlaps).as("times a holder found another inside").hasValue(0);
        assertThat(sections + failedCalls.get()).isEqualTo(4 * callsPerThread);
        assertThat(sections).as("most calls ran").isGreaterThan(2 * callsPerThread);
        assertThat(tokensInHoldingOrder).hasSize(sections);
        for (int i = 1; i < tokensInHoldingOrder.size(); i++) {
            assertThat(tokensInHoldingOrder.get(i)).as("token %d after %s", i, tokensInHoldingOrder.get(i - 1))
                .isGreaterThan(tokensInHoldingOrder.get(i - 1));
        }
    }

    @Test
    void aMinorityDownChangesNothingForLocks() throws Exception {
        Client a = client();
        Client b = client();
        int leader = etcd.awaitLeader();
        etcd.kill((leader + 1) % 3);

        Reachability reachability = a.backend.ping();
        assertThat(reachability.reachableNodes()).isEqualTo(2);
        assertThat(reachability.reachable()).as("a majority answers").isTrue();
        LockHandle held = a.locks.lock("report", Duration.ofSeconds(5), Duration.ZERO);
        assertThat(b.locks.tryLock("report", Duration.ofSeconds(5), Duration.ZERO)).isEmpty();
        Future<LockHandle> waiter = threads
            .submit(() -> b.locks.lock("report", Duration.ofSeconds(5), Duration.ofSeconds(60)));
        await().atMost(PATIENCE).until(() -> b.backend.inspect(b.backend.lockKey("report")).queueLength() >= 1);
        long first = held.fencingToken();
        assertThat(held.release()).isTrue();
        LockHandle next = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isGreaterThan(first);
        assertThat(next.release()).isTrue();
    }

    @Test
    void theMajorityDownFailsEveryCallClearlyRunsNoGuardedWorkAndTellsTheHolderItLostTheLock() throws Exception {
        Client a = client();
        Client b = client();
        LockHandle held = a.locks.lock(LockRequest.of("payroll")
            .withTtl(Duration.ofSeconds(3))
            .withWaitTime(Duration.ZERO)
            .withWatchdog(true));
        long heldToken = held.fencingToken();
        List<LockHandle> told = new CopyOnWriteArrayList<>();
        held.onLost(told::add);
        int leader = etcd.awaitLeader();

        etcd.kill(leader);
        etcd.kill((leader + 1) % 3);

        AtomicBoolean ran = new AtomicBoolean();
        Throwable refused = catchThrowable(() -> b.locks.callLocked(
                LockRequest.of("payroll-2").withTtl(Duration.ofSeconds(3)).withWaitTime(Duration.ZERO),
                () -> ran.getAndSet(true)));
        assertThat(refused).isInstanceOf(LockBackendException.class)
            .hasMessageContaining("distributed-lock.etcd.operation-timeout");
        assertThat(ran).as("the guarded work ran without its lock").isFalse();
        assertThat(b.backend.ping().reachable()).as("a majority answers").isFalse();
        // The listeners run on the watchdog's listener thread, a moment after the handle
        // is marked.
        await().atMost(PATIENCE).until(() -> held.isLost() && !told.isEmpty());
        assertThat(held.isHeld()).isFalse();
        assertThat(told).as("the holder was told, once").containsExactly(held);

        etcd.startAgain(leader);
        etcd.startAgain((leader + 1) % 3);
        etcd.awaitLeader();
        LockHandle next = await().atMost(PATIENCE)
            .ignoreExceptions()
            .until(() -> b.locks.tryLock("payroll", Duration.ofSeconds(3), Duration.ofSeconds(10)).orElse(null),
                    handle -> handle != null);
        assertThat(next.fencingToken()).as("tokens still increase after the outage").isGreaterThan(heldToken);
        assertThat(next.release()).isTrue();
    }

    @Test
    void aClientCutOffFromTheClusterIsToldItLostTheLockBeforeAnotherClientGetsIt() throws Exception {
        List<BlackholeProxy> proxies = new ArrayList<>();
        for (String endpoint : etcd.endpoints()) {
            proxies.add(new BlackholeProxy(endpoint));
        }
        try {
            Client cutOff = new Client(
                    EtcdLockBackend.connect(EtcdSettings.of(proxies.stream().map(BlackholeProxy::url).toList())
                        .withOperationTimeout(Duration.ofMillis(1500))));
            clients.add(cutOff);
            Client other = client();
            LockHandle held = cutOff.locks.lock(LockRequest.of("inventory")
                .withTtl(Duration.ofSeconds(3))
                .withWaitTime(Duration.ZERO)
                .withWatchdog(true));
            long heldToken = held.fencingToken();
            List<LockHandle> told = new CopyOnWriteArrayList<>();
            held.onLost(told::add);

            proxies.forEach(BlackholeProxy::blackhole);

            LockHandle next = other.locks.lock("inventory", Duration.ofSeconds(10), Duration.ofSeconds(60));
            assertThat(held.isHeld()).as("the cut-off holder no longer counts the lock held").isFalse();
            assertThat(next.fencingToken()).isGreaterThan(heldToken);
            await().atMost(PATIENCE).until(() -> !told.isEmpty());
            assertThat(told).as("the cut-off holder was told, once").containsExactly(held);
            AtomicBoolean ran = new AtomicBoolean();
            Throwable refused = catchThrowable(() -> cutOff.locks.callLocked(
                    LockRequest.of("inventory-2").withTtl(Duration.ofSeconds(3)).withWaitTime(Duration.ZERO),
                    () -> ran.getAndSet(true)));
            assertThat(refused).isInstanceOf(LockBackendException.class);
            assertThat(ran).as("guarded work ran without its lock").isFalse();
            assertThat(next.release()).isTrue();

            proxies.forEach(BlackholeProxy::heal);
            LockHandle again = await().atMost(PATIENCE)
                .ignoreExceptions()
                .until(() -> cutOff.locks.tryLock("inventory", Duration.ofSeconds(3), Duration.ZERO).orElse(null),
                        handle -> handle != null);
            assertThat(again.fencingToken()).isGreaterThan(next.fencingToken());
            assertThat(again.release()).isTrue();
        }
        finally {
            proxies.forEach(BlackholeProxy::close);
        }
    }

    /** A client whose calls give up after 1.5 s, for the tests that expect them to. */
    private Client client() {
        return client(Duration.ofMillis(1500));
    }

    private Client client(Duration operationTimeout) {
        Client client = new Client(
                EtcdLockBackend.connect(EtcdSettings.of(etcd.endpoints()).withOperationTimeout(operationTimeout)));
        clients.add(client);
        return client;
    }

    /**
     * One application instance: its own backend (and etcd client), watchdog and lock
     * service.
     */
    static final class Client implements AutoCloseable {

        final EtcdLockBackend backend;

        final LeaseWatchdog watchdog;

        final DefaultLockService locks;

        Client(EtcdLockBackend backend) {
            this.backend = backend;
            LockWaiters waiters = new LockWaiters();
            waiters.notificationsFrom(backend);
            backend.deliverHandOversTo(waiters);
            this.watchdog = new LeaseWatchdog(backend, 1.0 / 3);
            this.locks = new DefaultLockService(backend, watchdog,
                    new LockDefaults(Duration.ofSeconds(30), Duration.ZERO, true), waiters);
        }

        @Override
        public void close() {
            locks.close();
            watchdog.close();
            backend.close();
        }

    }

}
