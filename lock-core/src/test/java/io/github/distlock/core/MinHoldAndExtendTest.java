package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.memory.InMemoryLockBackend;

/**
 * A minimum hold and {@link LockHandle#extend} in the lock service, on the in-memory
 * store: what is checked before anything is sent, and how a release within the minimum
 * hold orders itself after a renewal the watchdog has in flight.
 */
class MinHoldAndExtendTest {

    private final InMemoryLockBackend store = new InMemoryLockBackend();

    private LeaseWatchdog watchdog;

    private DefaultLockService service;

    @AfterEach
    void close() {
        if (service != null) {
            service.close();
        }
        if (watchdog != null) {
            watchdog.close();
        }
    }

    private DefaultLockService serviceOn(LockBackend backend) {
        watchdog = new LeaseWatchdog(backend, 1.0 / 3);
        service = new DefaultLockService(backend, watchdog,
                new LockDefaults(Duration.ofSeconds(30), Duration.ZERO, true), new LockWaiters());
        return service;
    }

    @Test
    void aRenewalInFlightLandsBeforeTheMinimumHoldReleaseAndNothingIsRenewedAfterIt() throws Exception {
        SlowRenewals backend = new SlowRenewals(store);
        DefaultLockService locks = serviceOn(backend);
        Duration ttl = Duration.ofSeconds(3);
        LockHandle held = locks
            .lock(LockRequest.of("job").withTtl(ttl).withWatchdog(true).withMinHold(ttl).withWaitTime(Duration.ZERO));
        backend.holdRenewals.set(true);
        assertThat(backend.renewalStarted.await(10, TimeUnit.SECONDS)).as("the watchdog's renewal is in flight")
            .isTrue();

        CompletableFuture<Boolean> release = CompletableFuture.supplyAsync(held::release);

        await().during(Duration.ofMillis(300))
            .atMost(Duration.ofSeconds(10))
            .until(() -> !release.isDone() && !backend.calls.contains("releaseAfter"));
        backend.finishRenewal.countDown();
        assertThat(release.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(backend.calls).as("the release went out after the renewal's answer")
            .containsSubsequence("renew:start", "renew:end", "releaseAfter");
        long leaseLeft = store.inspect(store.lockKey("job")).leaseLeftMillis();
        assertThat(leaseLeft).as("what is left of the minimum hold, not the renewed 3 s").isBetween(1L, 2_500L);
        int callsAfterRelease = backend.calls.size();
        // Longer than a renewal period (1 s): a lease still watched would be renewed.
        await().during(Duration.ofMillis(1500))
            .atMost(Duration.ofSeconds(10))
            .until(() -> backend.calls.size() == callsAfterRelease);
        assertThat(watchdog.watchedLeases()).isZero();
        assertThat(held.isLost()).isFalse();
    }

    @Test
    void aMinimumHoldOnABackendThatCannotShortenALeaseFailsTheCallBeforeAnythingIsSent() {
        CountingBackend plain = new CountingBackend(store);
        DefaultLockService locks = serviceOn(plain);

        assertThat(locks.supportsMinHold()).isFalse();
        assertThatThrownBy(() -> locks.lock(LockRequest.of("report").withMinHold(Duration.ofMinutes(1))))
            .isInstanceOf(UnsupportedOperationException.class)
            .hasMessageContaining("'report'")
            .hasMessageContaining("PT1M")
            .hasMessageContaining(CountingBackend.class.getName())
            .hasMessageContaining("LeaseAdjustingLockBackend");
        assertThat(plain.acquireAttempts).hasValue(0);
        LockHandle held = locks.lock(LockRequest.of("report"));
        assertThatThrownBy(() -> held.extend(Duration.ofMinutes(1))).isInstanceOf(UnsupportedOperationException.class)
            .hasMessageContaining("LeaseAdjustingLockBackend");
        assertThat(held.release()).isTrue();
    }

    @Test
    void aMinimumHoldLongerThanTheTtlIsRefusedNamingTheLockAndBothDurations() {
        DefaultLockService locks = serviceOn(store);

        assertThat(locks.supportsMinHold()).isTrue();
        assertThatThrownBy(() -> locks
            .lock(LockRequest.of("report").withTtl(Duration.ofSeconds(10)).withMinHold(Duration.ofSeconds(11))))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("'report'")
            .hasMessageContaining("PT11S")
            .hasMessageContaining("PT10S");
        assertThatThrownBy(() -> LockRequest.of("report").withMinHold(Duration.ofSeconds(-1)))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("negative");
        assertThat(store.heldLocks()).isEmpty();
    }

    @Test
    void aMinimumHoldEqualToTheTtlIsAllowedAndAZeroOneIsNone() {
        DefaultLockService locks = serviceOn(store);

        LockHandle full = locks
            .lock(LockRequest.of("full").withTtl(Duration.ofSeconds(5)).withMinHold(Duration.ofSeconds(5)));
        LockHandle none = locks.lock(LockRequest.of("none").withMinHold(Duration.ZERO));

        assertThat(full.release()).isTrue();
        assertThat(none.release()).isTrue();
        assertThat(store.heldLocks()).as("only the one with a minimum hold left").containsExactly("full");
    }

    @Test
    void anExtensionThatFindsTheLockTakenReportsItLostToTheHandleAndItsListeners() {
        DefaultLockService locks = serviceOn(store);
        LockHandle held = locks.lock(LockRequest.of("import").withWatchdog(true));
        List<LockHandle> told = new CopyOnWriteArrayList<>();
        held.onLost(told::add);
        store.forceRelease("import");

        assertThat(held.extend(Duration.ofMinutes(1))).isFalse();

        assertThat(held.isHeld()).isFalse();
        await().atMost(Duration.ofSeconds(10)).until(() -> told.contains(held));
        assertThat(held.isLost()).isTrue();
        assertThat(held.release()).isFalse();
    }

    /**
     * The in-memory store, with the renewals held up at will: a renewal that the network
     * delays. Records the order in which calls start and end.
     */
    static final class SlowRenewals implements LeaseAdjustingLockBackend {

        final List<String> calls = new CopyOnWriteArrayList<>();

        final AtomicBoolean holdRenewals = new AtomicBoolean();

        final CountDownLatch renewalStarted = new CountDownLatch(1);

        final CountDownLatch finishRenewal = new CountDownLatch(1);

        private final InMemoryLockBackend delegate;

        SlowRenewals(InMemoryLockBackend delegate) {
            this.delegate = delegate;
        }

        @Override
        public LockKey lockKey(String name) {
            return delegate.lockKey(name);
        }

        @Override
        public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
            return delegate.tryAcquire(key, token, ttlMillis);
        }

        @Override
        public boolean release(LockKey key, String token) {
            calls.add("release");
            return delegate.release(key, token);
        }

        @Override
        public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
            calls.add("renew:start");
            if (holdRenewals.get()) {
                renewalStarted.countDown();
                try {
                    finishRenewal.await(30, TimeUnit.SECONDS);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
            delegate.renew(renewals, outcomes);
            calls.add("renew:end");
        }

        @Override
        public boolean releaseAfter(LockKey key, String token, long remainingMillis) {
            calls.add("releaseAfter");
            return delegate.releaseAfter(key, token, remainingMillis);
        }

        @Override
        public boolean extend(LockKey key, String token, long ttlMillis) {
            calls.add("extend");
            return delegate.extend(key, token, ttlMillis);
        }

    }

}
