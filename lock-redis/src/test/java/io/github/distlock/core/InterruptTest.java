package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * An interrupt never skips a release, a cancel or an undo: whatever the interrupt flag
 * says, the lock ends up released or never taken, and the flag is still set afterwards
 * for the caller's code to act on.
 */
class InterruptTest {

    private static final String LOCK = "lock:{interrupt}";

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisTestServer redis;

    private LockServiceConnection instance;

    private LockServiceConnection other;

    /** The driver under test; a subclass runs these same tests on another one. */
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.LETTUCE;
    }

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        instance = new LockServiceConnection(driver(), redis);
        other = new LockServiceConnection(driver(), redis);
        // Connected, and the scripts cached, before any test pauses Redis: these tests
        // are about
        // the lock commands, not about connecting or loading scripts.
        instance.service.lock(LockRequest.of("warm-up").withWaitTime(Duration.ZERO).withFencingToken()).release();
        other.service.lock(LockRequest.of("warm-up").withWaitTime(Duration.ZERO).withFencingToken()).release();
    }

    @AfterEach
    void disconnect() throws Exception {
        Thread.interrupted();
        if (redis.isPaused()) {
            redis.resume();
        }
        instance.close();
        other.close();
    }

    @Test
    void releaseWithTheInterruptFlagSetStillReleasesAndKeepsTheFlag() {
        LockHandle handle = instance.service.lock("interrupt", Duration.ofSeconds(30), Duration.ZERO);

        Thread.currentThread().interrupt();
        boolean released = handle.release();
        boolean flagAfterwards = Thread.interrupted();

        assertThat(released).isTrue();
        assertThat(flagAfterwards).isTrue();
        assertThat(redis.get(LOCK)).isNull();
    }

    @Test
    void callLockedWhoseActionRestoresTheInterruptReturnsItsResultAndFreesTheKey() throws Exception {
        String result = instance.service.callLocked(LockRequest.of("interrupt").withWaitTime(Duration.ZERO), () -> {
            // What code that catches InterruptedException is told to do: restore the
            // flag.
            Thread.currentThread().interrupt();
            return "done";
        });
        boolean flagAfterwards = Thread.interrupted();

        assertThat(result).isEqualTo("done");
        assertThat(flagAfterwards).isTrue();
        assertThat(redis.get(LOCK)).isNull();
    }

    @Test
    void tryLockWithTheInterruptFlagSetThrowsAndLeavesNoKeyBehind() {
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> instance.service.tryLock("interrupt", Duration.ofSeconds(30), Duration.ZERO))
            .isInstanceOf(LockAcquisitionException.class)
            .hasMessageContaining("Interrupted");
        boolean flagAfterwards = Thread.interrupted();

        assertThat(flagAfterwards).isTrue();
        assertThat(redis.get(LOCK)).isNull();
        assertThat(other.service.tryLock("interrupt", Duration.ofSeconds(30), Duration.ZERO)).isPresent();
    }

    @Test
    void anInterruptDuringAnAcquireLeavesNoKeyHeldByNobody() throws Exception {
        // Redis paused: the acquire is on its way when the interrupt comes, and runs on
        // resume.
        redis.pause();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean flag = new AtomicBoolean();
        Thread caller = new Thread(() -> {
            try {
                instance.service.tryLock("interrupt", Duration.ofSeconds(30), Duration.ZERO)
                    .ifPresent(handle -> failure.set(new AssertionError("acquired although interrupted")));
            }
            catch (Throwable ex) {
                failure.set(ex);
            }
            flag.set(Thread.currentThread().isInterrupted());
        });
        caller.start();
        awaitParked(caller);

        caller.interrupt();
        redis.resume();
        caller.join(10_000);

        assertThat(failure.get()).isInstanceOf(LockAcquisitionException.class).hasMessageContaining("Interrupted");
        assertThat(flag.get()).isTrue();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(redis.get(LOCK)).isNull());
    }

    @Test
    void anInterruptDuringAQueuedAttemptLeavesNoQueueEntryForAReleaseToHandTheLockTo() throws Exception {
        LockHandle held = other.service.lock("interrupt", Duration.ofSeconds(30), Duration.ZERO);
        // The waiter's first attempt is the queueing one (the token is requested up
        // front); Redis is
        // paused so the interrupt comes while that attempt is on its way.
        redis.pause();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                instance.service.tryLock(LockRequest.of("interrupt")
                    .withTtl(Duration.ofSeconds(30))
                    .withWaitTime(Duration.ofSeconds(20))
                    .withFencingToken());
            }
            catch (Throwable ex) {
                failure.set(ex);
            }
        });
        waiter.start();
        awaitParked(waiter);

        waiter.interrupt();
        redis.resume();
        waiter.join(10_000);
        assertThat(failure.get()).isInstanceOf(LockAcquisitionException.class).hasMessageContaining("Interrupted");

        assertThat(held.release()).isTrue();
        // Had the interrupted waiter stayed queued, the release would have handed it the
        // lock.
        assertThat(redis.get(LOCK)).isNull();
    }

    @Test
    void fencingTokenWithTheInterruptFlagSetIsStillIssued() {
        LockHandle handle = instance.service.lock("interrupt", Duration.ofSeconds(30), Duration.ZERO);

        Thread.currentThread().interrupt();
        long token = handle.fencingToken();
        boolean flagAfterwards = Thread.interrupted();

        assertThat(token).isPositive();
        assertThat(flagAfterwards).isTrue();
        assertThat(handle.release()).isTrue();
    }

    @Test
    void closeWithTheInterruptFlagSetStillReleases() {
        LockHandle handle = instance.service.lock("interrupt", Duration.ofSeconds(30), Duration.ZERO);

        Thread.currentThread().interrupt();
        handle.close();
        Thread.interrupted();

        assertThat(redis.get(LOCK)).isNull();
    }

    /**
     * Waits until {@code thread} is blocked on the reply of a command to the paused
     * Redis.
     */
    private static void awaitParked(Thread thread) {
        await().atMost(Duration.ofSeconds(20))
            .until(() -> thread.getState() == Thread.State.TIMED_WAITING || thread.getState() == Thread.State.WAITING);
    }

}
