package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Every outcome of a lock passes through the {@link LockListener} seam, in order, with
 * what metrics and the Actuator need to know, against a real Redis.
 */
class LockListenerTest {

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    @Test
    void anUncontendedLockIsAcquiredAtOnceAndReleased() throws Exception {
        try (LockServiceConnection instance = new LockServiceConnection(redisExtension.server())) {
            LockHandle handle = instance.service.lock(LockRequest.of("order:1").withName("orders"));
            LockContext context = instance.events.contexts.get(0);
            assertThat(context.name()).isEqualTo("orders");
            assertThat(context.key()).isEqualTo("order:1");
            assertThat(context.storeKey()).isEqualTo("lock:{order:1}");
            assertThat(context.handle()).isSameAs(handle);
            assertThat(context.acquiredAt()).isNotNull();
            assertThat(context.threadName()).isEqualTo(Thread.currentThread().getName());
            assertThat(context.leaseLeft()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(30));
            assertThat(context.fencingToken()).isEmpty();
            long fence = handle.fencingToken();
            assertThat(context.fencingToken()).hasValue(fence);

            assertThat(handle.release()).isTrue();
            assertThat(handle.release()).isFalse();
            assertThat(context.leaseLeft()).isZero();
            assertThat(instance.events.of("order:1")).containsExactly("acquiring order:1 orders",
                    "acquired order:1 at-once", "released order:1 released");
        }
    }

    @Test
    void aRequestWithoutANameIsUnnamedAndABlankNameIsRefused() throws Exception {
        try (LockServiceConnection instance = new LockServiceConnection(redisExtension.server())) {
            instance.service.lock(LockRequest.of("plain")).release();
            assertThat(instance.events.of("plain")).first().isEqualTo("acquiring plain unnamed");
        }
        assertThatThrownBy(() -> LockRequest.of("k").withName(" ")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("name must not be blank");
    }

    @Test
    void aWaiterIsToldItWaitsThenGetsTheLockHandedOver() throws Exception {
        try (LockServiceConnection instance = new LockServiceConnection(redisExtension.server())) {
            LockHandle holder = instance.service.lock("hot", Duration.ofSeconds(30), Duration.ZERO);
            CompletableFuture<LockHandle> waiter = CompletableFuture
                .supplyAsync(() -> instance.service.lock("hot", Duration.ofSeconds(30), Duration.ofSeconds(20)));
            await().atMost(Duration.ofSeconds(10)).until(() -> instance.events.of("hot").contains("waiting hot"));
            // Told it waits before it queues: released earlier, the lock would be taken,
            // not handed over.
            await().atMost(Duration.ofSeconds(10))
                .until(() -> Long.valueOf(1)
                    .equals(redisExtension.server().command("ZCARD", "lock:{hot}" + LettuceLockBackend.QUEUE_SUFFIX)));
            LockContext waiting = instance.events.contexts.get(1);
            assertThat(waiting.waited()).isTrue();
            assertThat(waiting.handle()).isNull();
            holder.release();
            LockHandle second = waiter.get(10, TimeUnit.SECONDS);
            second.release();
            List<String> events = instance.events.of("hot");
            assertThat(events).hasSize(7);
            assertThat(events.subList(0, 4)).containsExactly("acquiring hot unnamed", "acquired hot at-once",
                    "acquiring hot unnamed", "waiting hot");
            // The holder's release and the waiter's hand-over are told on two threads, in
            // either order on a busy
            // machine; the waiter's own release comes last.
            assertThat(events.subList(4, 7)).containsExactlyInAnyOrder("released hot released",
                    "acquired hot waited handed-over", "released hot released");
            assertThat(events.get(6)).isEqualTo("released hot released");
            assertThat(waiting.waitTime()).isPositive();
        }
    }

    @Test
    void aTimeoutIsReportedWithoutAHandle() throws Exception {
        try (LockServiceConnection instance = new LockServiceConnection(redisExtension.server())) {
            LockHandle holder = instance.service.lock("busy", Duration.ofSeconds(30), Duration.ZERO);
            Optional<LockHandle> none = instance.service.tryLock("busy", Duration.ofSeconds(30), Duration.ofMillis(50));
            assertThat(none).isEmpty();
            holder.release();
            assertThat(instance.events.of("busy")).containsExactly("acquiring busy unnamed", "acquired busy at-once",
                    "acquiring busy unnamed", "waiting busy", "not-acquired busy timeout", "released busy released");
            assertThat(instance.events.contexts.get(1).handle()).isNull();
        }
    }

    @Test
    void anInterruptedCallerAndADownRedisAreReportedWithTheirOutcome() throws Exception {
        RedisTestServer redis = redisExtension.server();
        try (LockServiceConnection instance = new LockServiceConnection(redis, Duration.ofMillis(300), true)) {
            Thread.currentThread().interrupt();
            try {
                assertThatThrownBy(() -> instance.service.lock("k", null, null))
                    .isInstanceOf(LockAcquisitionException.class);
            }
            finally {
                Thread.interrupted();
            }
            redis.pause();
            try {
                assertThatThrownBy(() -> instance.service.lock("k", null, Duration.ZERO))
                    .isInstanceOf(LockBackendException.class);
            }
            finally {
                redis.resume();
            }
            assertThat(instance.events.of("k")).containsExactly("acquiring k unnamed", "not-acquired k interrupted",
                    "acquiring k unnamed", "not-acquired k backend-error");
        }
    }

    @Test
    void renewalsAreCountedAndALostLeaseIsReportedWithItsReasonThenAReleaseFindsItGone() throws Exception {
        RedisTestServer redis = redisExtension.server();
        try (LockServiceConnection instance = new LockServiceConnection(redis)) {
            LockHandle handle = instance.service.lock("renewed", Duration.ofMillis(900), Duration.ZERO);
            LockContext context = instance.events.contexts.get(0);
            await().atMost(Duration.ofSeconds(10)).until(() -> context.renewals() >= 2);
            assertThat(instance.events.of("renewed")).contains("renewed renewed true");

            redis.del("lock:{renewed}");
            await().atMost(Duration.ofSeconds(10))
                .until(() -> instance.events.of("renewed").contains("lost renewed expired-or-taken"));
            assertThat(instance.lostLeases).singleElement().asString().startsWith("renewed: the key is gone");
            assertThat(handle.release()).isFalse();
            assertThat(instance.events.of("renewed")).last().isEqualTo("released renewed already-gone");
        }
    }

    @Test
    void aFailingListenerChangesNothingForTheCallerOrTheOtherListeners() throws Exception {
        RecordingLockListener after = new RecordingLockListener(new java.util.concurrent.CopyOnWriteArrayList<>());
        LockListener failing = new LockListener() {
            @Override
            public void acquired(LockContext lock) {
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void released(LockContext lock, ReleaseOutcome outcome) {
                throw new IllegalStateException("listener bug");
            }
        };
        try (LockServiceConnection instance = new LockServiceConnection(redisExtension.server())) {
            DefaultLockService service = new DefaultLockService(instance.backend, instance.watchdog,
                    new DefaultLockService.LockDefaults(Duration.ofSeconds(30), Duration.ofSeconds(1), true),
                    instance.waiters, LockListeners.of(List.of(failing, after)));
            LockHandle handle = service.lock("k", null, null);
            assertThat(handle.isHeld()).isTrue();
            assertThat(handle.release()).isTrue();
            assertThat(after.of("k")).containsExactly("acquiring k unnamed", "acquired k at-once",
                    "released k released");
        }
    }

    @Test
    void anErrorFromARenewalListenerLeavesEveryOtherLeaseOfTheBatchRenewedInThisJvm() throws Exception {
        // The listener seam shields against exceptions only; an Error used to stop the
        // batch at the first lease,
        // and the others ran out in the JVM although Redis had renewed them.
        LockListener failing = new LockListener() {
            @Override
            public void renewed(LockContext lock, boolean succeeded) {
                throw new AssertionError("listener bug");
            }
        };
        try (LockServiceConnection instance = new LockServiceConnection(redisExtension.server())) {
            DefaultLockService service = new DefaultLockService(instance.backend, instance.watchdog,
                    new DefaultLockService.LockDefaults(Duration.ofSeconds(30), Duration.ofSeconds(1), true),
                    instance.waiters, failing);
            List<LockHandle> handles = List.of(service.lock("batch:1", Duration.ofSeconds(3), Duration.ZERO),
                    service.lock("batch:2", Duration.ofSeconds(3), Duration.ZERO),
                    service.lock("batch:3", Duration.ofSeconds(3), Duration.ZERO));
            // Held throughout more than two leases' worth of time: each renewal must have
            // been applied.
            await().during(Duration.ofSeconds(7))
                .atMost(Duration.ofSeconds(30))
                .until(() -> handles.stream().allMatch(LockHandle::isHeld));
            assertThat(handles).allSatisfy(handle -> assertThat(handle.release()).isTrue());
        }
    }

}
