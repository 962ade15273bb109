package io.github.distlock.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockBackend.AcquireResult;
import io.github.distlock.core.LockBackend.LeaseRenewal;
import io.github.distlock.core.LockBackend.RenewalOutcome;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;

/**
 * The in-memory store's own rules, on a clock the test moves, and two lock services
 * sharing it as two instances of an application share one Redis. The whole contract suite
 * runs on it too ({@code InMemoryLockContractTest}).
 */
class InMemoryLockBackendTest {

    private final AtomicLong nanos = new AtomicLong();

    private final InMemoryLockBackend backend = new InMemoryLockBackend(nanos::get);

    private final LockKey key = backend.lockKey("order:42");

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
    }

    @Test
    void aLockIsHeldUntilItsLeaseRunsOutAndAcquiringItAgainWithTheSameTokenIsIdempotent() {
        assertThat(backend.tryAcquire(key, "a", 1_000).acquired()).isTrue();
        assertThat(backend.tryAcquire(key, "b", 1_000)).isEqualTo(AcquireResult.notAcquired(1_000, 0));

        advance(400);
        AcquireResult again = backend.tryAcquire(key, "a", 1_000);
        assertThat(again.acquired()).isTrue();
        assertThat(again.validityMillis()).as("the lease left, not a new one").isEqualTo(600);

        advance(600);
        assertThat(backend.tryAcquire(key, "b", 1_000).acquired()).as("a's lease ran out").isTrue();
        assertThat(backend.release(key, "a")).as("a lock that is someone else's now").isFalse();
        assertThat(backend.release(key, "b")).isTrue();
        assertThat(backend.heldLocks()).isEmpty();
    }

    @Test
    void aReleaseHandsTheLockToTheLongestWaitingLiveWaiterWithALargerFencingToken() {
        AcquireResult holder = backend.tryAcquire(key, "holder", 10_000, 0, false, true);
        backend.tryAcquire(key, "gone", 5_000, 1_000, false, false);
        advance(10);
        backend.tryAcquire(key, "first", 7_000, 3_000, false, false);
        backend.tryAcquire(key, "second", 7_000, 3_000, false, false);
        assertThat(backend.inspect(key).queueLength()).isEqualTo(3);
        advance(1_000);

        assertThat(backend.release(key, "holder")).isTrue();

        AcquireResult first = backend.tryAcquire(key, "first", 7_000, 3_000, true, true);
        assertThat(first.acquired()).as("handed over, skipping the waiter whose entry ran out").isTrue();
        assertThat(first.validityMillis()).isEqualTo(7_000);
        assertThat(first.fencingToken()).isGreaterThan(holder.fencingToken());
        assertThat(backend.inspect(key).queueLength()).isEqualTo(1);
        assertThat(backend.stopWaiting(key, "second", 7_000).acquired()).isFalse();
        assertThat(backend.inspect(key).queueLength()).isZero();
    }

    @Test
    void aWaiterThatStopsWaitingAfterAHandOverOwnsTheLock() {
        backend.tryAcquire(key, "holder", 10_000);
        backend.tryAcquire(key, "waiter", 4_000, 3_000, false, false);
        backend.release(key, "holder");

        AcquireResult stopped = backend.stopWaiting(key, "waiter", 4_000);

        assertThat(stopped.acquired()).isTrue();
        assertThat(stopped.hasFencingToken()).isTrue();
        assertThat(backend.inspect(key).held()).isTrue();
    }

    @Test
    void renewalExtendsOnlyALeaseThatIsStillOurs() {
        backend.tryAcquire(key, "a", 1_000);
        LockKey other = backend.lockKey("order:43");
        backend.tryAcquire(other, "b", 1_000);
        backend.forceRelease("order:43");
        RenewalOutcome[] outcomes = new RenewalOutcome[2];

        advance(900);
        backend.renew(List.of(new LeaseRenewal(key, "a", 1_000), new LeaseRenewal(other, "b", 1_000)),
                (index, outcome) -> outcomes[index] = outcome);
        advance(900);

        assertThat(outcomes).containsExactly(RenewalOutcome.RENEWED, RenewalOutcome.LOST);
        assertThat(backend.inspect(key).leaseLeftMillis()).isEqualTo(100);
    }

    @Test
    void aReleaseAfterOnlyShortensOurOwnLeaseAndKeepsItsWaitersUntilItExpires() {
        backend.tryAcquire(key, "holder", 10_000, 0, false, false);
        backend.tryAcquire(key, "waiter", 10_000, 60_000, false, false);

        assertThat(backend.releaseAfter(key, "other", 1_000)).as("not ours: left alone").isFalse();
        assertThat(backend.releaseAfter(key, "holder", 20_000)).as("ours, and never lengthened").isTrue();
        assertThat(backend.inspect(key).leaseLeftMillis()).isEqualTo(10_000);
        assertThat(backend.releaseAfter(key, "holder", 2_000)).isTrue();
        assertThat(backend.inspect(key).leaseLeftMillis()).isEqualTo(2_000);
        assertThat(backend.tryAcquire(key, "waiter", 10_000, 60_000, true, false).acquired())
            .as("not handed over before the minimum hold ends")
            .isFalse();

        advance(2_000);
        assertThat(backend.tryAcquire(key, "waiter", 10_000, 60_000, true, false).acquired())
            .as("free once it expired, for the waiter's next attempt")
            .isTrue();
        assertThat(backend.releaseAfter(key, "holder", 1_000)).as("expired: no longer ours").isFalse();
        assertThat(backend.releaseAfter(key, "waiter", 0)).as("nothing left of a minimum hold: a release").isTrue();
        assertThat(backend.heldLocks()).isEmpty();
    }

    @Test
    void extendSetsTheLeaseOfOurOwnLockOnly() {
        backend.tryAcquire(key, "holder", 1_000);

        assertThat(backend.extend(key, "other", 60_000)).isFalse();
        assertThat(backend.extend(key, "holder", 60_000)).isTrue();
        advance(59_000);
        assertThat(backend.inspect(key).leaseLeftMillis()).isEqualTo(1_000);
        assertThat(backend.extend(key, "holder", 10)).as("shorter is allowed too").isTrue();
        advance(10);
        assertThat(backend.extend(key, "holder", 60_000)).as("an expired lock is not brought back").isFalse();
        assertThat(backend.heldLocks()).isEmpty();
    }

    @Test
    void fencingTokensIncreaseAcrossLocksAndAfterAllWasForgottenAndOnlyWhileTheLockIsOurs() {
        long first = backend.tryAcquire(key, "a", 1_000, 0, false, true).fencingToken();
        long second = backend.issueFencingToken(backend.lockKey("other"), "nobody", 1_000);
        long third = backend.issueFencingToken(key, "a", 1_000);
        backend.clear();
        long fourth = backend.tryAcquire(key, "b", 1_000, 0, false, true).fencingToken();

        assertThat(second).as("not held: no token").isZero();
        assertThat(third).isGreaterThan(first);
        assertThat(fourth).isGreaterThan(third);
        assertThat(backend.inspect(key).lastFencingToken()).isEqualTo(fourth);
    }

    @Test
    void inspectionReportsAFreeLockAsRedisDoes() {
        assertThat(backend.inspect(key).held()).isFalse();
        assertThat(backend.inspect(key).leaseLeftMillis()).isZero();
        assertThat(backend.ping().reachable()).isTrue();
    }

    @Test
    void twoLockServicesOnOneStoreExcludeEachOtherAndAReleaseWakesTheOtherServicesWaiter() throws Exception {
        InMemoryLockBackend store = new InMemoryLockBackend();
        DefaultLockService first = lockService(store);
        DefaultLockService second = lockService(store);
        LockHandle held = first.lock("order:42", Duration.ofSeconds(30), Duration.ZERO);
        assertThat(second.tryLock("order:42", Duration.ofSeconds(30), Duration.ZERO)).isEmpty();

        CompletableFuture<Optional<LockHandle>> waiter = CompletableFuture
            .supplyAsync(() -> second.tryLock(LockRequest.of("order:42")
                .withTtl(Duration.ofSeconds(30))
                .withWaitTime(Duration.ofMinutes(1))
                .withFencingToken()));
        await().until(() -> store.inspect(store.lockKey("order:42")).queueLength() == 1);
        long holderToken = held.fencingToken();
        held.release();

        LockHandle next = waiter.get(30, TimeUnit.SECONDS).orElseThrow();
        assertThat(next.isHeld()).isTrue();
        assertThat(next.fencingToken()).isGreaterThan(holderToken);
        next.release();
        assertThat(store.heldLocks()).isEmpty();
    }

    private DefaultLockService lockService(InMemoryLockBackend store) {
        LockWaiters waiters = new LockWaiters();
        waiters.notificationsFrom(store);
        store.deliverHandOversTo(waiters);
        LeaseWatchdog watchdog = new LeaseWatchdog(store, 1.0 / 3);
        DefaultLockService service = new DefaultLockService(store, watchdog,
                new LockDefaults(Duration.ofSeconds(30), Duration.ZERO, false), waiters);
        closeables.add(service);
        closeables.add(watchdog::close);
        return service;
    }

    private void advance(long millis) {
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    }

}
