package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.DistributedLock;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.aop.LockTestContexts.LockProbe;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * A nested {@code @DistributedLock} call on a key its thread already holds joins the
 * outer hold: it neither waits for itself nor costs a round trip, and only the outermost
 * call releases. Other keys nest as separate locks, and other threads are other owners.
 * Every method here waits {@code 0s}, so a self-deadlock would fail at once.
 */
class DistributedLockReentrancyTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private ApplicationContextRunner runner() {
        return LockTestContexts.runner(redis.server()).withBean(NestingService.class);
    }

    @Test
    void recursiveCallsOnTheSameKeyJoinTheOuterHoldInsteadOfWaitingForThemselves() {
        runner().run(context -> {
            NestingService service = context.getBean(NestingService.class);

            assertThat(service.descend(5)).isEqualTo(5);

            assertThat(service.lockSeenAtEachLevel()).hasSize(6).containsOnly(true);
            assertThat(context.getBean(LockProbe.class).exists("lock:{tree}")).isFalse();
        });
    }

    @Test
    void theLockOutlivesTheInnerCallAndOnlyTheOutermostCallReleasesIt() {
        runner().run(context -> {
            NestingService service = context.getBean(NestingService.class);

            assertThat(service.outerCallingInner()).as("lock present after the inner call returned").isTrue();

            assertThat(context.getBean(LockProbe.class).exists("lock:{shared}")).isFalse();
            assertThat(HeldLocks.countForCurrentThread()).isZero();
        });
    }

    @Test
    void nestedCallsOnTheSameKeyCostNoRedisRoundTrip() {
        runner().run(context -> {
            NestingService service = context.getBean(NestingService.class);
            service.outerCallingInner(); // connect and load the scripts first
            redis.server().resetStats();

            service.outerCallingInnerFiveTimes();

            // One acquire and one release, as for a single call; without joining it would
            // be six of each.
            assertThat(LockTestContexts.lockRoundTrips(redis.server())).isEqualTo(2);
        });
    }

    @Test
    void nestedCallOnAnotherKeyTakesAndReleasesItsOwnLock() {
        runner().run(context -> {
            NestingService service = context.getBean(NestingService.class);
            redis.server().resetStats();

            List<List<String>> seen = service.outerOnACallingInnerOnB();

            assertThat(seen.get(0)).as("inside the inner call").containsExactly("lock:{a}", "lock:{b}");
            assertThat(seen.get(1)).as("after the inner call").containsExactly("lock:{a}");
            assertThat(LockTestContexts.lockRoundTrips(redis.server())).isEqualTo(4);
        });
    }

    @Test
    void anotherThreadIsAnotherOwnerAndTimesOutWhileTheKeyIsHeld() {
        runner().run(context -> {
            NestingService service = context.getBean(NestingService.class);

            Throwable fromOtherThread = service.outerWhileAnotherThreadCalls(() -> service.inner());

            assertThat(fromOtherThread).isInstanceOf(LockTimeoutException.class);
            assertThat(((LockTimeoutException) fromOtherThread).getKey()).isEqualTo("shared");
        });
    }

    @Test
    void anotherThreadWaitsForTheOutermostCallAndThenGetsTheLock() {
        runner().run(context -> {
            NestingService service = context.getBean(NestingService.class);

            AtomicReference<CompletableFuture<Boolean>> waiter = new AtomicReference<>();
            service.outerThatKeepsAWaiterWaiting(waiter);

            assertThat(waiter.get().get(5, TimeUnit.SECONDS)).as("the waiter saw the lock held by itself").isTrue();
            assertThat(context.getBean(LockProbe.class).exists("lock:{shared}")).isFalse();
        });
    }

    @Test
    void aMethodThatThrowsLeavesNoHoldOnItsThread() {
        runner().run(context -> {
            NestingService service = context.getBean(NestingService.class);

            assertThatThrownBy(service::outerThatThrowsAfterInner).isInstanceOf(IllegalStateException.class);

            assertThat(HeldLocks.countForCurrentThread()).isZero();
            assertThat(context.getBean(LockProbe.class).exists("lock:{shared}")).isFalse();
            // A later call on the same thread acquires afresh: the failed call left
            // nothing to join.
            assertThat(service.outerCallingInner()).isTrue();
        });
    }

    static class NestingService {

        private final LockProbe probe;

        private final ObjectProvider<NestingService> self;

        private final List<Boolean> lockSeenAtEachLevel = new CopyOnWriteArrayList<>();

        NestingService(LockProbe probe, ObjectProvider<NestingService> self) {
            this.probe = probe;
            this.self = self;
        }

        public List<Boolean> lockSeenAtEachLevel() {
            return lockSeenAtEachLevel;
        }

        /** Calls itself through the proxy, so each level goes through the interceptor. */
        @DistributedLock(key = "'tree'", waitTime = "0s")
        public int descend(int levels) {
            lockSeenAtEachLevel.add(probe.exists("lock:{tree}"));
            return (levels == 0 ? 0 : 1 + self.getObject().descend(levels - 1));
        }

        @DistributedLock(key = "'shared'", waitTime = "0s")
        public boolean outerCallingInner() {
            self.getObject().inner();
            return probe.exists("lock:{shared}");
        }

        @DistributedLock(key = "'shared'", waitTime = "0s")
        public void outerCallingInnerFiveTimes() {
            for (int i = 0; i < 5; i++) {
                self.getObject().inner();
            }
        }

        @DistributedLock(key = "'shared'", waitTime = "0s")
        public void inner() {
        }

        @DistributedLock(key = "'shared'", waitTime = "0s")
        public void outerThatThrowsAfterInner() {
            self.getObject().inner();
            throw new IllegalStateException("boom");
        }

        @DistributedLock(key = "'a'", waitTime = "0s")
        public List<List<String>> outerOnACallingInnerOnB() {
            List<List<String>> seen = new ArrayList<>();
            seen.add(self.getObject().innerOnB());
            seen.add(probe.heldLocks());
            return seen;
        }

        @DistributedLock(key = "'b'", waitTime = "0s")
        public List<String> innerOnB() {
            return probe.heldLocks();
        }

        /**
         * Runs {@code call} on another thread while this thread holds 'shared'; returns
         * what it threw.
         */
        @DistributedLock(key = "'shared'", waitTime = "0s")
        public Throwable outerWhileAnotherThreadCalls(Runnable call) throws InterruptedException {
            try {
                CompletableFuture.runAsync(call).get(5, TimeUnit.SECONDS);
                return null;
            }
            catch (ExecutionException ex) {
                return ex.getCause();
            }
            catch (java.util.concurrent.TimeoutException ex) {
                throw new AssertionError("the other thread's call neither returned nor failed", ex);
            }
        }

        /**
         * Not returning the waiter's future: the lock would then follow it, and the
         * waiter would wait for itself.
         */
        @DistributedLock(key = "'shared'", waitTime = "0s")
        public void outerThatKeepsAWaiterWaiting(AtomicReference<CompletableFuture<Boolean>> waiterOut) {
            CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> self.getObject().waitingCall());
            waiterOut.set(waiter);
            await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(20)).until(() -> !waiter.isDone());
        }

        @DistributedLock(key = "'shared'", waitTime = "5s")
        public boolean waitingCall() {
            return probe.exists("lock:{shared}");
        }

    }

}
