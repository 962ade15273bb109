package io.github.distlock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;

import io.github.distlock.contract.ContractApplication;
import io.github.distlock.contract.LockKeyspace;
import io.github.distlock.contract.RedisContractStore;
import io.github.distlock.contract.StandaloneRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * The registry's {@code Lock} contract on one real Redis, with two application instances
 * (two registries, as two JVMs would have): each test locks a key named after itself.
 */
class LockServiceLockRegistryTest {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    private static RedisContractStore store;

    private static ContractApplication first;

    private static ContractApplication second;

    private String key;

    @BeforeAll
    static void start() {
        store = new RedisContractStore(StandaloneRedis.start(), LockKeyspace.SINGLE_REDIS);
        first = ContractApplication.start(store.applicationProperties(), Registry.class);
        second = ContractApplication.start(store.applicationProperties(), Registry.class);
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable closeable : new AutoCloseable[] { first, second, store }) {
            if (closeable != null) {
                try {
                    closeable.close();
                }
                catch (Exception ex) {
                    // the next one still closes
                }
            }
        }
    }

    @BeforeEach
    void name(TestInfo test) {
        this.key = "si:" + test.getTestMethod().orElseThrow().getName();
    }

    private static LockServiceLockRegistry registry(ContractApplication instance) {
        return instance.bean(LockServiceLockRegistry.class);
    }

    @Test
    void oneInstanceAtATime() throws Exception {
        Lock mine = registry(first).obtain(this.key);
        Lock theirs = registry(second).obtain(this.key);
        mine.lock();
        try {
            assertThat(store.isHeld(this.key)).isTrue();
            assertThat(CompletableFuture.supplyAsync(theirs::tryLock).get()).isFalse();
        }
        finally {
            mine.unlock();
        }
        assertThat(store.isHeld(this.key)).isFalse();
        assertThat(CompletableFuture.supplyAsync(() -> {
            boolean locked = theirs.tryLock();
            theirs.unlock();
            return locked;
        }).get()).isTrue();
    }

    @Test
    void aWaitingTryLockGetsTheLockWhenTheOtherInstanceUnlocks() throws Exception {
        Lock mine = registry(first).obtain(this.key);
        mine.lock();
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Boolean> theirs = CompletableFuture.supplyAsync(() -> {
            Lock lock = registry(second).obtain(this.key);
            waiting.countDown();
            try {
                boolean locked = lock.tryLock(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
                if (locked) {
                    lock.unlock();
                }
                return locked;
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
        waiting.await();
        Thread.sleep(200);
        mine.unlock();
        assertThat(theirs.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void holdsAreReentrantAndTheLastUnlockReleases() {
        Lock lock = registry(first).obtain(this.key);
        lock.lock();
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        assertThat(store.isHeld(this.key)).as("one hold left").isTrue();
        lock.unlock();
        assertThat(store.isHeld(this.key)).isFalse();
    }

    @Test
    void onlyTheOwningThreadMayUnlock() throws Exception {
        Lock lock = registry(first).obtain(this.key);
        lock.lock();
        try {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread other = new Thread(() -> {
                try {
                    lock.unlock();
                }
                catch (Throwable ex) {
                    thrown.set(ex);
                }
            });
            other.start();
            other.join();
            assertThat(thrown.get()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not held by the calling thread");
            assertThat(store.isHeld(this.key)).isTrue();
        }
        finally {
            lock.unlock();
        }
    }

    @Test
    void lockInterruptiblyStopsWaitingWhenInterruptedAndHoldsNothing() throws Exception {
        Lock mine = registry(first).obtain(this.key);
        mine.lock();
        try {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicBoolean flagAfter = new AtomicBoolean(true);
            Lock theirs = registry(second).obtain(this.key);
            Thread waiter = new Thread(() -> {
                try {
                    theirs.lockInterruptibly();
                }
                catch (Throwable ex) {
                    thrown.set(ex);
                    flagAfter.set(Thread.currentThread().isInterrupted());
                }
            });
            waiter.start();
            Thread.sleep(300);
            waiter.interrupt();
            waiter.join(PATIENCE.toMillis());
            assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
            assertThat(flagAfter.get()).as("cleared, as Lock.lockInterruptibly does").isFalse();
            assertThat(registry(second).heldHandle(this.key)).isEmpty();
        }
        finally {
            mine.unlock();
        }
    }

    @Test
    void anUnlockThatFindsTheLockGoneSaysSo() {
        Lock lock = registry(first).obtain(this.key);
        lock.lock();
        store.takeAway(this.key);
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
            .hasMessageContaining(this.key);
        assertThat(lock.tryLock()).as("the local hold was released all the same").isTrue();
        lock.unlock();
    }

    @Test
    void aReentrantTryLockNoticesALostLeaseAndTakesTheLockAgainIfFree() {
        Lock lock = registry(first).obtain(this.key);
        lock.lock();
        long firstToken = registry(first).heldHandle(this.key).orElseThrow().fencingToken();
        store.takeAway(this.key);
        await().atMost(PATIENCE)
            .until(() -> registry(first).heldHandle(this.key).map((handle) -> !handle.isHeld()).orElse(false));
        assertThat(lock.tryLock()).isTrue();
        assertThat(registry(first).heldHandle(this.key).orElseThrow().fencingToken()).isGreaterThan(firstToken);
        lock.unlock();
        lock.unlock();
        assertThat(store.isHeld(this.key)).isFalse();
    }

    @Test
    void aDistributedLockTakesItsOwnTtlAndRenewLockSetsIt() {
        DistributedLock lock = registry(first).obtain(this.key);
        lock.lock(Duration.ofSeconds(5));
        try {
            assertThat(store.leaseLeftMillis(this.key)).isBetween(1L, 5_000L);
            registry(first).renewLock(this.key, Duration.ofMinutes(2));
            assertThat(store.leaseLeftMillis(this.key)).isGreaterThan(60_000L);
        }
        finally {
            lock.unlock();
        }
        assertThatThrownBy(() -> registry(first).renewLock(this.key)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("does not hold it");
    }

    @Test
    void executeLockedRunsTheTaskUnderTheLock() throws Exception {
        AtomicBoolean heldDuring = new AtomicBoolean();
        registry(first).executeLocked(this.key, () -> heldDuring.set(store.isHeld(this.key)));
        assertThat(heldDuring).isTrue();
        assertThat(store.isHeld(this.key)).isFalse();
    }

    @Test
    void executeLockedWithAWaitTimesOutWhileTheOtherInstanceHoldsTheLock() throws Exception {
        Lock theirs = registry(second).obtain(this.key);
        // The Lock contract: the thread that locks unlocks, so the other instance gets a
        // thread of its own.
        ExecutorService otherInstance = Executors.newSingleThreadExecutor();
        try {
            otherInstance.submit(theirs::lock).get();
            assertThatThrownBy(() -> registry(first).executeLocked(this.key, Duration.ofMillis(200), () -> {
            })).isInstanceOf(TimeoutException.class);
            otherInstance.submit(theirs::unlock).get();
        }
        finally {
            otherInstance.shutdown();
        }
    }

    @Test
    void unusedLocksAreForgottenButHeldOnesKept() {
        LockServiceLockRegistry registry = registry(first);
        Lock held = registry.obtain(this.key);
        Lock unused = registry.obtain(this.key + ":unused");
        held.lock();
        try {
            registry.expireUnusedOlderThan(0);
            assertThat(registry.obtain(this.key)).isSameAs(held);
            assertThat(registry.obtain(this.key + ":unused")).isNotSameAs(unused);
        }
        finally {
            held.unlock();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(LockRegistryAutoConfiguration.class)
    static class Registry {

    }

}
