package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Waiting: a release hands the lock to the waiter and tells it through pub/sub, releases
 * nobody publishes are still picked up within the holder's lease, and waiting leaves
 * nothing behind.
 */
class ReleaseWakeUpTest {

    private static final String CHANNEL = LettuceLockBackend.handOverChannel("lock:");

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisTestServer redis;

    private LockServiceConnection holder;

    private LockServiceConnection waiter;

    private CountingBackend waiterBackend;

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        holder = new LockServiceConnection(driver(), redis);
        waiter = new LockServiceConnection(driver(), redis.host(), redis.port(), Duration.ofSeconds(2), true,
                backend -> waiterBackend = new CountingBackend(backend));
        // Start the waiter's subscription, as its first contended wait would.
        await().atMost(Duration.ofSeconds(10)).until(waiter.subscriber::startListening);
    }

    /**
     * How many connections the two instances may open beyond those they had after one
     * lock each, when 16 threads lock at once: none with Lettuce (one connection each).
     */
    long poolGrowth() {
        return 0;
    }

    /**
     * How many distinct keys
     * {@link #waitingOnManyDistinctKeysLeavesNoSubscriptionOrWaiterBehind} waits on: a
     * hundred thousand on Lettuce, the default client, which backs the guide's "waiting
     * on 100,000 distinct keys leaves nothing behind".
     */
    int distinctKeys() {
        return 100_000;
    }

    /** The driver under test; a subclass runs this same contract on another one. */
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.LETTUCE;
    }

    @AfterEach
    void disconnect() throws Exception {
        holder.close();
        waiter.close();
    }

    @Test
    void aReleaseHandsTheLockToTheWaiterWithoutAnotherAttempt() throws Exception {
        LockHandle held = holder.service.lock("order:1", Duration.ofSeconds(30), Duration.ZERO);
        CompletableFuture<Optional<LockHandle>> waiting = CompletableFuture
            .supplyAsync(() -> waiter.service.tryLock("order:1", null, Duration.ofSeconds(20)));
        await().atMost(Duration.ofSeconds(20)).until(() -> queueLength("order:1") == 1);
        long attemptsBeforeRelease = waiterBackend.acquireAttempts.get();
        long heldFence = held.fencingToken();

        held.release();

        Optional<LockHandle> acquired = waiting.get(10, TimeUnit.SECONDS);
        assertThat(acquired).isPresent();
        // The release made the waiter the owner and told it so: no further attempt, and
        // no poll
        // (the holder's lease was 30 s and the fallback poll is 1 s away).
        assertThat(waiterBackend.acquireAttempts.get() - attemptsBeforeRelease).isZero();
        assertThat(acquired.get().issuedFencingToken()).as("a hand-over comes with its token").isPresent();
        assertThat(acquired.get().fencingToken()).isGreaterThan(heldFence);
        assertThat(acquired.get().isHeld()).isTrue();
        assertThat(waiter.waiters.waiting()).isZero();
        assertThat(queueLength("order:1")).isZero();
        acquired.get().release();
        assertThat(redis.dbSize()).as("only the fencing counter is left").isEqualTo(1);
    }

    @Test
    void handoffLatencyAfterAReleaseIsReported() throws Exception {
        int handoffs = 200;
        long[] latencies = new long[handoffs];
        for (int i = 0; i < handoffs; i++) {
            LockHandle held = holder.service.lock("handoff", Duration.ofSeconds(30), Duration.ZERO);
            CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
                LockHandle handle = waiter.service.lock("handoff", null, Duration.ofSeconds(10));
                long at = System.nanoTime();
                handle.release();
                return at;
            });
            await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(1))
                .until(() -> queueLength("handoff") == 1);
            long releasedAt = System.nanoTime();
            held.release();
            latencies[i] = acquiredAt.get(10, TimeUnit.SECONDS) - releasedAt;
        }
        Arrays.sort(latencies);
        System.out.printf("release-to-acquire handoff over %d runs: median %.2f ms, p99 %.2f ms, max %.2f ms%n",
                handoffs, latencies[handoffs / 2] / 1e6, latencies[handoffs * 99 / 100] / 1e6,
                latencies[handoffs - 1] / 1e6);
        // Per hand-over, the bare first attempt fails and one queueing attempt queues the
        // waiter;
        // the release hands it the lock. Waiting for polls instead (one a second, the
        // holder's
        // lease being 30 s) would add at least one more to every hand-over; a stall of a
        // second
        // between queueing and release, on a busy machine, adds one to a few of them.
        assertThat(waiterBackend.acquireAttempts.get()).isBetween(2L * handoffs, 2L * handoffs + handoffs / 10);
    }

    @Test
    void aForeignDeleteThatPublishesNothingIsNoticedWithinTheHoldersRemainingTtl() throws Exception {
        // A lease far longer than an ordinary stall, so "before it ended" cannot be
        // missed by a busy machine.
        redis.command("SET", "lock:{order:2}", "foreign", "PX", "30000");
        long started = System.nanoTime();
        CompletableFuture<Optional<LockHandle>> waiting = CompletableFuture
            .supplyAsync(() -> waiter.service.tryLock("order:2", null, Duration.ofSeconds(20)));
        await().atMost(Duration.ofSeconds(20)).until(() -> queueLength("order:2") == 1);

        redis.del("lock:{order:2}");

        Optional<LockHandle> acquired = waiting.get(10, TimeUnit.SECONDS);
        assertThat(acquired).isPresent();
        // Picked up before the foreign holder's lease would have ended on its own.
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofMillis(30_000));
        acquired.get().release();
    }

    private long queueLength(String key) {
        return (Long) redis.command("ZCARD", "lock:{" + key + "}" + LettuceLockBackend.QUEUE_SUFFIX);
    }

    @Test
    void uncontendedReleasesPublishNothing() {
        redis.resetStats();
        for (int i = 0; i < 50; i++) {
            holder.service.lock("quiet:" + i, null, Duration.ZERO).release();
        }
        assertThat(redis.commandCalls("publish")).isZero();
    }

    @Test
    @SuppressWarnings("unchecked")
    void waitingOnManyDistinctKeysLeavesNoSubscriptionOrWaiterBehind() throws Exception {
        holder.service.lock("warm-up", null, Duration.ZERO).release();
        waiter.service.lock("warm-up", null, Duration.ZERO).release();
        long clientsBefore = redis.connectedClients();
        assertThat(redis.subscriberCount(CHANNEL)).isEqualTo(1);

        int keys = distinctKeys();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<Boolean>> results = IntStream.range(0, 16).mapToObj(worker -> pool.submit(() -> {
                for (int i = worker; i < keys; i += 16) {
                    String key = "many:" + i;
                    LockHandle held = holder.service
                        .lock(LockRequest.of(key).withWatchdog(false).withWaitTime(Duration.ZERO));
                    // A short wait that times out: the waiter enters and leaves the
                    // registry.
                    if (waiter.service.tryLock(key, null, Duration.ofMillis(1)).isPresent()) {
                        return false;
                    }
                    held.release();
                }
                return true;
            })).toList();
            for (Future<Boolean> result : results) {
                assertThat(result.get(5, TimeUnit.MINUTES)).isTrue();
            }
        }
        finally {
            pool.shutdownNow();
        }

        assertThat(waiter.waiters.waiting()).isZero();
        // Every waiter that timed out left the queue: no queue or waiter entry of any key
        // is left.
        assertThat((List<Object>) redis.command("KEYS", "*:queue")).isEmpty();
        assertThat((List<Object>) redis.command("KEYS", "*:waiting")).isEmpty();
        assertThat(redis.subscriberCount(CHANNEL)).isEqualTo(1);
        assertThat(redis.command("PUBSUB", "NUMPAT")).isEqualTo(0L);
        assertThat((List<Object>) redis.command("PUBSUB", "CHANNELS")).containsExactly((Object) CHANNEL);
        assertThat(redis.connectedClients()).isBetween(clientsBefore, clientsBefore + poolGrowth());
    }

}
