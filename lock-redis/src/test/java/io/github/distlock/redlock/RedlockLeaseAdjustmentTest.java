package io.github.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.memory.InMemoryLockBackend;

/**
 * A minimum hold and an extension over a Redlock, with in-memory stores as its nodes (the
 * Redis nodes run the same through the contract suite): the lease is cut or set on a
 * majority, and a Redlock with one node that cannot shorten a lease does not claim that
 * it can.
 */
class RedlockLeaseAdjustmentTest {

    private final List<InMemoryLockBackend> stores = List.of(new InMemoryLockBackend(), new InMemoryLockBackend(),
            new InMemoryLockBackend());

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private DefaultLockService serviceOn(List<? extends FencingLockBackend> nodes) {
        RedlockBackend redlock = new RedlockBackend(nodes, List.of("a", "b", "c"), "lock:", Duration.ofSeconds(1), 0.01,
                null, null, null);
        LeaseWatchdog watchdog = new LeaseWatchdog(redlock, 1.0 / 3);
        DefaultLockService service = new DefaultLockService(redlock, watchdog,
                new LockDefaults(Duration.ofSeconds(30), Duration.ZERO, true), new LockWaiters());
        closeables.add(redlock);
        closeables.add(watchdog);
        closeables.add(service);
        return service;
    }

    private long leaseOn(InMemoryLockBackend store, String name) {
        return store.inspect(new LockKey(name, "lock:{" + name + "}")).leaseLeftMillis();
    }

    @Test
    void aReleaseWithinTheMinimumHoldCutsTheLeaseOnTheNodesAndTheLockStaysTakenUntilItEnds() {
        DefaultLockService first = serviceOn(stores);
        DefaultLockService second = serviceOn(stores);
        Duration minHold = Duration.ofMillis(1500);
        long before = System.nanoTime();
        LockHandle held = first.lock(LockRequest.of("job").withWatchdog(true).withMinHold(minHold));

        assertThat(first.supportsMinHold()).isTrue();
        assertThat(held.release()).isTrue();

        await().atMost(Duration.ofSeconds(10))
            .until(() -> stores.stream().allMatch(store -> leaseOn(store, "job") <= minHold.toMillis()));
        assertThat(second.tryLock(LockRequest.of("job"))).as("taken until the minimum hold ends").isEmpty();
        LockHandle next = await().atMost(Duration.ofSeconds(20))
            .until(() -> second.tryLock(LockRequest.of("job")).orElse(null), Objects::nonNull);
        assertThat(Duration.ofNanos(System.nanoTime() - before)).isGreaterThanOrEqualTo(minHold);
        assertThat(next.release()).isTrue();
    }

    @Test
    void anExtensionSetsTheLeaseOnAMajorityAndFailsOnceNoMajorityHoldsTheLock() {
        DefaultLockService service = serviceOn(stores);
        LockHandle held = service.lock(LockRequest.of("import").withWatchdog(false));

        assertThat(held.extend(Duration.ofMinutes(5))).isTrue();
        // A majority at least: the acquisition counted once a majority granted it, and a
        // grant still on its way to the third node may land after the extension.
        assertThat(stores.stream().filter(store -> leaseOn(store, "import") > 60_000).count())
            .isGreaterThanOrEqualTo(2);

        stores.get(0).forceRelease("lock:{import}");
        stores.get(1).forceRelease("lock:{import}");
        assertThat(held.extend(Duration.ofMinutes(5))).as("two of three nodes say not ours").isFalse();
        assertThat(held.isHeld()).isFalse();
    }

    @Test
    void aRedlockWithANodeThatCannotShortenALeaseRefusesAMinimumHoldAndAnExtension() {
        DefaultLockService service = serviceOn(List.of(stores.get(0), stores.get(1), new FencingOnly(stores.get(2))));

        assertThat(service.supportsMinHold()).isFalse();
        assertThatThrownBy(() -> service.lock(LockRequest.of("job").withMinHold(Duration.ofSeconds(1))))
            .isInstanceOf(UnsupportedOperationException.class)
            .hasMessageContaining(RedlockBackend.class.getName())
            .hasMessageContaining("LeaseAdjustingLockBackend");
        assertThat(stores).allSatisfy(store -> assertThat(store.heldLocks()).isEmpty());
        LockHandle held = service.lock(LockRequest.of("job"));
        assertThatThrownBy(() -> held.extend(Duration.ofMinutes(1))).isInstanceOf(UnsupportedOperationException.class);
        assertThat(held.release()).isTrue();
    }

    /** A real store seen as a fencing backend only, as a custom node would be. */
    private static final class FencingOnly implements FencingLockBackend {

        private final InMemoryLockBackend store;

        FencingOnly(InMemoryLockBackend store) {
            this.store = store;
        }

        @Override
        public LockKey lockKey(String name) {
            return store.lockKey(name);
        }

        @Override
        public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
            return store.tryAcquire(key, token, ttlMillis);
        }

        @Override
        public boolean release(LockKey key, String token) {
            return store.release(key, token);
        }

        @Override
        public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
            store.renew(renewals, outcomes);
        }

        @Override
        public long issueFencingToken(LockKey key, String token, long ttlMillis) {
            return store.issueFencingToken(key, token, ttlMillis);
        }

    }

}
