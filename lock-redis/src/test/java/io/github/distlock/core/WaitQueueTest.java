package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockHandle;
import io.github.distlock.core.LockBackend.AcquireResult;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * The wait queue: a release hands the lock to the longest-waiting live waiter, in arrival
 * order, skips waiters that are gone, and a waiter that gives up leaves no entry a
 * release could hand the lock to.
 */
class WaitQueueTest {

    private static final String LOCK = "lock:{queue}";

    private static final String QUEUE = LOCK + LettuceLockBackend.QUEUE_SUFFIX;

    private static final String WAITING = LOCK + LettuceLockBackend.WAITING_SUFFIX;

    /**
     * Well below the fallback poll's second, and well above the few milliseconds an idle
     * machine needs.
     */
    private static final Duration PROMPT = Duration.ofMillis(750);

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisTestServer redis;

    private final List<LockServiceConnection> connections = new ArrayList<>();

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
    }

    @AfterEach
    void disconnect() throws Exception {
        for (LockServiceConnection connection : connections) {
            connection.close();
        }
    }

    /** A separate application instance, subscribed as its first wait would make it. */
    /** The driver under test; a subclass runs this same contract on another one. */
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.LETTUCE;
    }

    private LockServiceConnection instance() {
        LockServiceConnection connection = new LockServiceConnection(driver(), redis);
        connections.add(connection);
        await().atMost(Duration.ofSeconds(10)).until(connection.subscriber::startListening);
        return connection;
    }

    private long queueLength() {
        return (Long) redis.command("ZCARD", QUEUE);
    }

    @Test
    void waitersGetTheLockInTheOrderTheyArrived() throws Exception {
        LockServiceConnection holder = instance();
        LockHandle held = holder.service.lock("queue", null, Duration.ZERO);
        List<String> order = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (String name : List.of("first", "second", "third")) {
            LockServiceConnection waiter = instance();
            long queuedBefore = queueLength();
            waiters.add(CompletableFuture.runAsync(() -> {
                LockHandle handle = waiter.service.lock("queue", null, Duration.ofSeconds(20));
                order.add(name);
                handle.release();
            }));
            await().atMost(Duration.ofSeconds(20)).until(() -> queueLength() == queuedBefore + 1);
        }

        held.release();

        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
        assertThat(order).containsExactly("first", "second", "third");
        assertThat(queueLength()).isZero();
        assertThat(redis.command("EXISTS", LOCK, WAITING)).isEqualTo(0L);
    }

    @Test
    void aReleaseSkipsTheEntryOfAWaiterThatIsGoneAndHandsTheLockToTheNextLiveOne() throws Exception {
        LockServiceConnection holder = instance();
        LockServiceConnection waiter = instance();
        LockHandle held = holder.service.lock("queue", null, Duration.ZERO);
        // A waiter that died after queueing: first in line, its entry lapsed a second
        // ago.
        long now = System.currentTimeMillis();
        redis.command("ZADD", QUEUE, "1", "dead-waiter");
        redis.command("HSET", WAITING, "dead-waiter", (now - 1000) + ":30000");
        CompletableFuture<Optional<LockHandle>> waiting = CompletableFuture
            .supplyAsync(() -> waiter.service.tryLock("queue", null, Duration.ofSeconds(20)));
        await().atMost(Duration.ofSeconds(20)).until(() -> queueLength() == 2);

        held.release();

        Optional<LockHandle> acquired = waiting.get(10, TimeUnit.SECONDS);
        assertThat(acquired).isPresent();
        assertThat(redis.get(LOCK)).isNotEqualTo("dead-waiter");
        assertThat(queueLength()).isZero();
        acquired.get().release();
        assertThat(redis.command("EXISTS", LOCK, QUEUE, WAITING)).isEqualTo(0L);
    }

    @Test
    void aWaiterThatTimesOutLeavesTheQueueSoTheNextReleaseDeletesTheLock() {
        LockServiceConnection holder = instance();
        LockServiceConnection waiter = instance();
        LockHandle held = holder.service.lock("queue", null, Duration.ZERO);

        assertThat(waiter.service.tryLock("queue", null, Duration.ofMillis(300))).isEmpty();

        assertThat(redis.command("EXISTS", QUEUE, WAITING)).isEqualTo(0L);
        redis.resetStats();
        assertThat(held.release()).isTrue();
        assertThat(redis.command("EXISTS", LOCK)).isEqualTo(0L);
        assertThat(redis.commandCalls("publish")).isZero();
    }

    @Test
    void aLockHandedOverJustAsTheWaitEndsBelongsToTheWaiter() {
        LockServiceConnection connection = instance();
        QueueingLockBackend backend = (QueueingLockBackend) connection.backend;
        LockKey key = backend.lockKey("queue");
        long holderFence = backend.tryAcquire(key, "holder", 30_000, 0, false, true).fencingToken();
        assertThat(backend.tryAcquire(key, "waiter", 30_000, 3_000, false, true).acquired()).isFalse();

        // The release lands between the waiter's last attempt and its giving up.
        assertThat(backend.release(key, "holder")).isTrue();
        long handedOver = backend.stopWaiting(key, "waiter", 30_000).fencingToken();

        assertThat(handedOver).isGreaterThan(holderFence);
        assertThat(redis.get(LOCK)).isEqualTo("waiter");
        assertThat(redis.pttl(LOCK)).isBetween(1L, 30_000L);
    }

    @Test
    void aHandOverWhoseMessageIsLostIsFoundByTheWaitersNextAttempt() {
        LockServiceConnection connection = instance();
        QueueingLockBackend backend = (QueueingLockBackend) connection.backend;
        LockKey key = backend.lockKey("queue");
        long holderFence = backend.tryAcquire(key, "holder", 30_000, 0, false, true).fencingToken();
        assertThat(backend.tryAcquire(key, "waiter", 5_000, 3_000, false, true).acquired()).isFalse();

        backend.release(key, "holder");

        LockBackend.AcquireResult retry = backend.tryAcquire(key, "waiter", 5_000, 3_000, true, true);
        assertThat(retry.acquired()).isTrue();
        assertThat(retry.fencingToken()).isGreaterThan(holderFence);
        assertThat(redis.pttl(LOCK)).isBetween(1L, 5_000L);
        assertThat(redis.command("EXISTS", QUEUE, WAITING)).isEqualTo(0L);
    }

    @Test
    void anInterruptedWaiterLeavesTheQueueAndThrows() throws Exception {
        LockServiceConnection holder = instance();
        LockServiceConnection waiter = instance();
        LockHandle held = holder.service.lock("queue", null, Duration.ZERO);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<Boolean> interruptFlag = new AtomicReference<>();
        Thread thread = new Thread(() -> {
            try {
                waiter.service.tryLock("queue", null, Duration.ofSeconds(20));
            }
            catch (Throwable ex) {
                failure.set(ex);
                interruptFlag.set(Thread.currentThread().isInterrupted());
            }
        });
        thread.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> queueLength() == 1);

        thread.interrupt();
        thread.join(10_000);

        assertThat(failure.get()).isInstanceOf(LockAcquisitionException.class).hasMessageContaining("Interrupted");
        assertThat(interruptFlag.get()).isTrue();
        assertThat(redis.command("EXISTS", QUEUE, WAITING)).isEqualTo(0L);
        assertThat(held.release()).isTrue();
        assertThat(redis.command("EXISTS", LOCK)).isEqualTo(0L);
    }

    @Test
    void aWaiterWithoutWakeUpsStillGetsTheHandedOverLockByPolling() throws Exception {
        LockServiceConnection holder = instance();
        // Never subscribed: waiters poll with a short backoff.
        LockServiceConnection waiter = new LockServiceConnection(driver(), redis);
        connections.add(waiter);
        waiter.subscriber.stop();
        LockHandle held = holder.service.lock("queue", null, Duration.ZERO);
        CompletableFuture<Optional<LockHandle>> waiting = CompletableFuture
            .supplyAsync(() -> waiter.service.tryLock("queue", null, Duration.ofSeconds(20)));
        await().atMost(Duration.ofSeconds(20)).until(() -> queueLength() == 1);
        long heldFence = held.fencingToken();

        held.release();

        Optional<LockHandle> acquired = waiting.get(10, TimeUnit.SECONDS);
        assertThat(acquired).isPresent();
        assertThat(acquired.get().fencingToken()).isGreaterThan(heldFence);
        acquired.get().release();
    }

    @Test
    void aHandOverPublishedBeforeTheSubscriptionStartedIsFoundWithoutWaitingForTheOnceASecondPoll() throws Exception {
        // Trusting the new subscription would sleep until the fallback poll, a second
        // later, every time. A stall
        // of a busy machine can make one hand-over slow too, not three in a row.
        List<Duration> took = new ArrayList<>();
        while (took.size() < 3 && (took.isEmpty() || took.get(took.size() - 1).compareTo(PROMPT) >= 0)) {
            took.add(handOverPublishedBeforeTheSubscriptionStarted("queue:" + took.size()));
        }

        assertThat(took).as("hand-overs found, in order").anyMatch(duration -> duration.compareTo(PROMPT) < 0);
    }

    /**
     * How long a waiter took to find the hand-over of {@code name}, published before its
     * subscription came up.
     */
    private Duration handOverPublishedBeforeTheSubscriptionStarted(String name) {
        LockServiceConnection holder = instance();
        LockHandle held = holder.service.lock(name, null, Duration.ZERO);
        // The waiter's subscription "comes up" right after its first attempt, too late
        // for the
        // hand-over, which is published while nobody listens (nothing is subscribed at
        // all here).
        AtomicBoolean subscribed = new AtomicBoolean();
        LockServiceConnection waiter = new LockServiceConnection(driver(), redis.host(), redis.port(),
                Duration.ofSeconds(2), true, backend -> new CountingBackend(backend) {
                    @Override
                    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis,
                            boolean queued, boolean fencingToken) {
                        AcquireResult attempt = super.tryAcquire(key, token, ttlMillis, queueMillis, queued,
                                fencingToken);
                        if (!attempt.acquired()) {
                            held.release();
                            subscribed.set(true);
                        }
                        return attempt;
                    }
                });
        connections.add(waiter);
        waiter.subscriber.stop();
        waiter.waiters.notificationsFrom(subscribed::get, subscribed::get);

        long started = System.nanoTime();
        Optional<LockHandle> acquired = waiter.service.tryLock(name, null, Duration.ofSeconds(20));
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(acquired).isPresent();
        acquired.get().release();
        return took;
    }

    @Test
    void locksNobodyWaitsForNeverStartTheSubscription() {
        LockServiceConnection connection = new LockServiceConnection(driver(), redis);
        connections.add(connection);

        for (int i = 0; i < 20; i++) {
            connection.service.lock("free:" + i, null, Duration.ofSeconds(5)).release();
        }

        // A subscription starts in the background; give it the time it would need to
        // show.
        await().during(Duration.ofMillis(500))
            .atMost(Duration.ofSeconds(20))
            .until(() -> redis.subscriberCount(LettuceLockBackend.handOverChannel("lock:")) == 0);
    }

    @Test
    void theFirstFailedAttemptOfAWaitStartsTheSubscriptionThatLaterHandOversArriveOn() throws Exception {
        LockServiceConnection holder = instance();
        LockServiceConnection waiter = new LockServiceConnection(driver(), redis);
        connections.add(waiter);
        String channel = LettuceLockBackend.handOverChannel("lock:");
        await().atMost(Duration.ofSeconds(10)).until(() -> redis.subscriberCount(channel) == 1);
        LockHandle held = holder.service.lock("queue", null, Duration.ZERO);

        CompletableFuture<LockHandle> waiting = CompletableFuture
            .supplyAsync(() -> waiter.service.lock("queue", null, Duration.ofSeconds(30)));

        // Only the holder's instance was subscribed; the waiter's first failed attempt
        // subscribes it.
        await().atMost(Duration.ofSeconds(10)).until(() -> redis.subscriberCount(channel) == 2);
        // Redis counts the subscriber before the client has read the confirmation that
        // marks it delivering.
        LockKey queue = io.github.distlock.redis.RedisKeyNaming.lockKey("lock:", "queue");
        await().atMost(Duration.ofSeconds(10)).until(() -> waiter.waiters.notificationsDelivered(queue));
        assertThat(waiting).isNotDone();
        held.release();
        assertThat(waiting.get(10, TimeUnit.SECONDS).isHeld()).isTrue();
        waiting.get().release();
    }

    @Test
    void theReleaseOfALockThatIsNoLongerOursHandsNothingOver() {
        LockServiceConnection connection = instance();
        QueueingLockBackend backend = (QueueingLockBackend) connection.backend;
        LockKey key = backend.lockKey("queue");
        backend.tryAcquire(key, "holder", 30_000, 0, false, true);
        backend.tryAcquire(key, "waiter", 30_000, 3_000, false, true);

        assertThat(backend.release(key, "somebody-else")).isFalse();

        assertThat(redis.get(LOCK)).isEqualTo("holder");
        assertThat(queueLength()).isEqualTo(1);
    }

}
