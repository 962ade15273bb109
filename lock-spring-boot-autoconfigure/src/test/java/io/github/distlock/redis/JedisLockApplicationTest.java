package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.LockBackend;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Applications on Jedis ({@code spring.data.redis.client-type=jedis}) against one real
 * Redis: the auto-configuration picks {@link SpringDataLockBackend}, and everything an
 * application does with a lock works as on Lettuce, across two instances.
 */
class JedisLockApplicationTest {

    /** Well below the waiter's fallback re-check a second away. */
    private static final Duration PROMPT = Duration.ofMillis(900);

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisTestServer redis;

    private LockApplication first;

    private LockApplication second;

    @BeforeEach
    void startTwoInstances() {
        redis = redisExtension.server();
        first = start();
        second = start();
    }

    private LockApplication start(String... more) {
        String[] properties = { "spring.data.redis.client-type=jedis", "spring.data.redis.host=" + redis.host(),
                "spring.data.redis.port=" + redis.port(),
                // Generous for the tests that are not about timeouts: on a loaded machine
                // a call (or a cold
                // connect) took longer than 500 ms. The tests of a paused Redis start an
                // impatient instance.
                "distributed-lock.operation-timeout=5s",
                // Only the operation timeout may end a call to a paused Redis: Jedis's
                // own 2 s read timeout raced it.
                "spring.data.redis.timeout=60s" };
        String[] all = new String[properties.length + more.length];
        System.arraycopy(properties, 0, all, 0, properties.length);
        System.arraycopy(more, 0, all, properties.length, more.length);
        return LockApplication.start(all);
    }

    /**
     * An instance with a 500 ms operation timeout, its connection opened (retrying, as a
     * cold connect may be slow).
     */
    private LockApplication impatient() {
        LockApplication impatient = start("distributed-lock.operation-timeout=500ms");
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
            impatient.lockService().lock("connected", null, Duration.ZERO).release();
            return true;
        });
        return impatient;
    }

    @AfterEach
    void stopInstances() {
        redis.resume();
        first.close();
        second.close();
    }

    @Test
    void aJedisApplicationRunsOnTheSpringDataBackend() {
        assertThat(first.bean(RedisConnectionFactory.class)).isInstanceOf(JedisConnectionFactory.class);
        assertThat(first.bean(LockBackend.class)).isInstanceOf(SpringDataLockBackend.class);
    }

    @Test
    void theWholeLifecycleWorksAcrossTwoJedisInstances() throws Exception {
        LockLifecycle.run("order:1", first.lockService(), second.lockService(), redis);
    }

    @Test
    void aWaiterInAnotherInstanceIsHandedTheLockByTheRelease() throws Exception {
        // The holder's lease has 30 s left; only the release message can wake the waiter
        // within 900 ms of the
        // release (its fallback re-check is a second away), every time. A stall of a busy
        // machine can make one
        // hand-over slow too, not three in a row.
        List<Duration> took = new ArrayList<>();
        while (took.size() < 3 && (took.isEmpty() || took.get(took.size() - 1).compareTo(PROMPT) >= 0)) {
            took.add(handOver("order:2:" + took.size()));
        }

        assertThat(took).as("release-to-hand-over times").anyMatch(duration -> duration.compareTo(PROMPT) < 0);
    }

    /**
     * Hands {@code name} from the first instance to a waiter in the second; returns the
     * time from the release.
     */
    private Duration handOver(String name) throws Exception {
        LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(Duration.ofSeconds(30)).withWaitTime(Duration.ZERO));
        CompletableFuture<LockHandle> waiting = CompletableFuture.supplyAsync(() -> second.lockService()
            .lock(LockRequest.of(name).withTtl(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(20))));
        await().atMost(Duration.ofSeconds(20))
            .until(() -> Long.valueOf(1).equals(redis.command("ZCARD", "lock:{" + name + "}:queue")));

        long heldFence = held.fencingToken();
        long releasedAt = System.nanoTime();
        assertThat(held.release()).isTrue();
        LockHandle handedOver = waiting.get(20, TimeUnit.SECONDS);
        Duration took = Duration.ofNanos(System.nanoTime() - releasedAt);

        assertThat(handedOver.issuedFencingToken()).as("a hand-over comes with its token").isPresent();
        assertThat(handedOver.fencingToken()).isGreaterThan(heldFence);
        assertThat(handedOver.release()).isTrue();
        assertThat(redis.get("lock:{" + name + "}")).isNull();
        return took;
    }

    @Test
    void theAnnotationExcludesAcrossJedisInstances() throws Exception {
        AtomicBoolean inside = new AtomicBoolean();
        AtomicBoolean overlapped = new AtomicBoolean();
        Runnable work = () -> {
            if (!inside.compareAndSet(false, true)) {
                overlapped.set(true);
            }
            await().pollDelay(Duration.ofMillis(20)).until(() -> true);
            inside.set(false);
        };
        CompletableFuture<?>[] calls = new CompletableFuture<?>[20];
        for (int i = 0; i < calls.length; i++) {
            LockApplication instance = i % 2 == 0 ? first : second;
            calls[i] = CompletableFuture.runAsync(() -> instance.guardedWork().run("job", () -> {
                work.run();
                return null;
            }));
        }
        CompletableFuture.allOf(calls).get(60, TimeUnit.SECONDS);

        assertThat(overlapped).isFalse();
        assertThat(redis.get("lock:{job}")).isNull();
    }

    @Test
    void aPausedRedisFailsTheAcquireWithinTheOperationTimeoutAndLeavesNoKeyBehind() {
        try (LockApplication impatient = impatient()) {
            redis.pause();
            long started = System.nanoTime();

            assertThatThrownBy(() -> impatient.lockService()
                .tryLock(LockRequest.of("order:3").withTtl(Duration.ofMinutes(5)).withWaitTime(Duration.ZERO)))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("operation-timeout=PT0.5S");

            // The client would wait 60 s; 20 s leave room for a stalled machine, not for
            // the client timeout.
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
            redis.resume();
            // Whether or not the SET ran once Redis woke up, it is undone: the key does
            // not stay 5 minutes.
            await().atMost(Duration.ofSeconds(20)).until(() -> redis.get("lock:{order:3}") == null);
            assertThat(second.lockService().tryLock("order:3", null, Duration.ofSeconds(2))).isPresent();
        }
    }

    @Test
    void aReleaseInterruptedWhileRedisIsPausedStillReleasesAndKeepsTheFlag() throws Exception {
        LockHandle held = first.lockService()
            .lock(LockRequest.of("order:4").withTtl(Duration.ofSeconds(30)).withWaitTime(Duration.ZERO));
        redis.pause();
        AtomicBoolean released = new AtomicBoolean();
        AtomicBoolean flag = new AtomicBoolean();
        Thread releaser = new Thread(() -> {
            released.set(held.release());
            flag.set(Thread.currentThread().isInterrupted());
        });
        releaser.start();
        // Within the 5 s operation timeout (room for a stall): the release waits for
        // Redis on the backend's thread.
        await().atMost(Duration.ofSeconds(20))
            .pollInterval(Duration.ofMillis(5))
            .until(() -> releaser.getState() == Thread.State.TIMED_WAITING
                    || releaser.getState() == Thread.State.WAITING);

        releaser.interrupt();
        redis.resume();
        releaser.join(10_000);

        assertThat(released).as("the release ran to completion").isTrue();
        assertThat(flag).as("the interrupt flag is kept").isTrue();
        assertThat(redis.get("lock:{order:4}")).isNull();
    }

}
