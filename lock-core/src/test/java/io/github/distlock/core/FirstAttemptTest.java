package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.memory.InMemoryLockBackend;

/**
 * Which attempt a lock call makes first on a store with a wait queue
 * ({@link QueueingLockBackend#triesBeforeQueueing}): the plain one, and queueing only if
 * the lock is taken, where that is cheapest (Redis); queueing at once for a caller that
 * will wait where a failed plain attempt costs as much (ZooKeeper); the plain one for a
 * caller that will not wait, whatever the store.
 */
class FirstAttemptTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    private final List<AutoCloseable> closing = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable resource : closing) {
            resource.close();
        }
    }

    @Test
    void whereThePlainAttemptIsCheaperAWaitingCallerTriesItFirstAndQueuesOnlyOnceTheLockIsTaken() throws Exception {
        Recording store = new Recording(true);
        DefaultLockService service = service(store);
        LockHandle held = service.lock("order:1", TTL, Duration.ZERO);
        store.attempts.clear();

        CompletableFuture<LockHandle> waiting = CompletableFuture
            .supplyAsync(() -> service.lock("order:1", TTL, Duration.ofSeconds(20)));
        await().atMost(Duration.ofSeconds(10)).until(() -> store.attempts.size() >= 2);

        assertThat(store.attempts.subList(0, 2)).containsExactly("plain", "queueing");
        held.release();
        waiting.get(10, TimeUnit.SECONDS).release();
    }

    @Test
    void whereItIsNotAWaitingCallerQueuesWithItsFirstAttempt() throws Exception {
        Recording store = new Recording(false);
        DefaultLockService service = service(store);
        LockHandle held = service.lock("order:2", TTL, Duration.ZERO);
        store.attempts.clear();

        CompletableFuture<LockHandle> waiting = CompletableFuture
            .supplyAsync(() -> service.lock("order:2", TTL, Duration.ofSeconds(20)));
        await().atMost(Duration.ofSeconds(10)).until(() -> !store.attempts.isEmpty());

        assertThat(store.attempts).first().isEqualTo("queueing");
        assertThat(store.attempts).doesNotContain("plain");
        held.release();
        LockHandle handedOver = waiting.get(10, TimeUnit.SECONDS);
        assertThat(handedOver.isHeld()).isTrue();
        handedOver.release();
    }

    @Test
    void aCallerThatWillNotWaitMakesThePlainAttemptOnEveryStore() {
        Recording store = new Recording(false);
        DefaultLockService service = service(store);

        try (LockHandle held = service.tryLock(LockRequest.of("order:3").withWaitTime(Duration.ZERO)).orElseThrow()) {
            assertThat(held.isHeld()).isTrue();
        }
        assertThat(service.tryLock(LockRequest.of("order:3").withWaitTime(Duration.ZERO))).isPresent()
            .get()
            .satisfies(LockHandle::release);

        assertThat(store.attempts).containsOnly("plain");
    }

    private DefaultLockService service(Recording store) {
        LockWaiters waiters = new LockWaiters();
        waiters.notificationsFrom(store.delegate);
        store.delegate.deliverHandOversTo(waiters);
        LeaseWatchdog watchdog = new LeaseWatchdog(store, 1.0 / 3);
        DefaultLockService service = new DefaultLockService(store, watchdog, new LockDefaults(TTL, Duration.ZERO, true),
                waiters);
        closing.add(service);
        closing.add(watchdog);
        return service;
    }

    /**
     * The in-memory store, recording each attempt as {@code plain} (the three-argument
     * {@code tryAcquire}) or {@code queueing}, and saying whether to try before queueing
     * as the test wants.
     */
    private static final class Recording implements QueueingLockBackend {

        final InMemoryLockBackend delegate = new InMemoryLockBackend();

        final List<String> attempts = new CopyOnWriteArrayList<>();

        private final boolean triesBeforeQueueing;

        Recording(boolean triesBeforeQueueing) {
            this.triesBeforeQueueing = triesBeforeQueueing;
        }

        @Override
        public boolean triesBeforeQueueing() {
            return triesBeforeQueueing;
        }

        @Override
        public LockKey lockKey(String name) {
            return delegate.lockKey(name);
        }

        @Override
        public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
            attempts.add("plain");
            return delegate.tryAcquire(key, token, ttlMillis);
        }

        @Override
        public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
                boolean fencingToken) {
            attempts.add(queueMillis > 0 ? "queueing" : "not queueing");
            return delegate.tryAcquire(key, token, ttlMillis, queueMillis, queued, fencingToken);
        }

        @Override
        public AcquireResult stopWaiting(LockKey key, String token, long ttlMillis) {
            return delegate.stopWaiting(key, token, ttlMillis);
        }

        @Override
        public boolean release(LockKey key, String token) {
            return delegate.release(key, token);
        }

        @Override
        public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
            delegate.renew(renewals, outcomes);
        }

    }

}
