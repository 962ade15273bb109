package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.distlock.LockHandle;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRequest;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * The lock's contract against a real redis-server: exclusion, expiry, owner-checked
 * release, the wire format, fencing tokens, and what happens when Redis goes away. On
 * Lettuce; the same contract runs on Jedis in {@link JedisLockServiceTest}.
 */
class RedisLockServiceTest {

    private static final Duration SHORT_TTL = Duration.ofMillis(300);

    /**
     * The lease the watchdog test keeps alive: short, so that five of them pass quickly,
     * yet long enough that a watchdog thread kept off the CPU for a few hundred ms (a
     * loaded 2-core build machine) still renews in time.
     */
    private static final Duration WATCHDOG_TTL = Duration.ofSeconds(1);

    /**
     * How long to wait for what must happen eventually: generous, as a loaded CI machine
     * stalls for seconds.
     */
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisTestServer redis;

    private LockServiceConnection instanceA;

    private LockServiceConnection instanceB;

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        instanceA = new LockServiceConnection(driver(), redis);
        instanceB = new LockServiceConnection(driver(), redis);
    }

    /** The driver under test; a subclass runs this same contract on another one. */
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.LETTUCE;
    }

    @AfterEach
    void disconnect() throws Exception {
        instanceA.close();
        instanceB.close();
    }

    @Test
    void secondAcquireFailsWhileTheLockIsHeldAndSucceedsAfterRelease() {
        LockHandle first = instanceA.service.lock("order:1", null, Duration.ZERO);

        assertThat(instanceB.service.tryLock("order:1", null, Duration.ZERO)).isEmpty();
        assertThat(instanceA.service.tryLock("order:1", null, Duration.ofMillis(50))).isEmpty();
        assertThat(first.isHeld()).isTrue();

        assertThat(first.release()).isTrue();
        assertThat(first.isHeld()).isFalse();
        Optional<LockHandle> second = instanceB.service.tryLock("order:1", null, Duration.ZERO);
        assertThat(second).isPresent();
        second.get().release();
    }

    @Test
    void lockIsFreeAgainAfterTheTtlExpiresWhenNothingRenewsIt() {
        LockHandle first = instanceA.service
            .lock(LockRequest.of("order:2").withTtl(SHORT_TTL).withWatchdog(false).withFencingToken());
        assertThat(instanceB.service.tryLock("order:2", null, Duration.ZERO)).isEmpty();

        // The waiter is woken no later than the holder's remaining lease.
        Optional<LockHandle> second = instanceB.service.tryLock("order:2", null, Duration.ofSeconds(3));

        assertThat(second).isPresent();
        assertThat(first.isHeld()).isFalse();
        assertThat(second.get().fencingToken()).isGreaterThan(first.fencingToken());
        second.get().release();
    }

    @Test
    void wireFormatIsAPlainStringKeyWithHashTagAndRandomToken() {
        try (LockHandle handle = instanceA.service.lock("order:42", Duration.ofSeconds(10), Duration.ZERO)) {
            String value = redis.get("lock:{order:42}");
            assertThat(value).matches("[0-9a-f]{32}");
            assertThat(redis.command("TYPE", "lock:{order:42}")).isEqualTo("string");
            assertThat(redis.pttl("lock:{order:42}")).isBetween(1L, 10_000L);
            long fence = handle.fencingToken();
            assertThat(redis.get("lock:{order:42}:fence")).isEqualTo(Long.toString(fence));
            assertThat(redis.pttl("lock:{order:42}:fence")).as("the counter expires, a day after its last use")
                .isBetween(Duration.ofDays(1).minusMinutes(1).toMillis(), Duration.ofDays(1).toMillis());
            assertThat(handle.key()).isEqualTo("order:42");
        }
        assertThat(redis.get("lock:{order:42}")).isNull();
    }

    @Test
    void eachAcquisitionGetsAFreshToken() {
        LockHandle first = instanceA.service.lock("order:43", null, Duration.ZERO);
        String firstToken = redis.get("lock:{order:43}");
        first.release();
        LockHandle second = instanceA.service.lock("order:43", null, Duration.ZERO);
        assertThat(redis.get("lock:{order:43}")).isNotEqualTo(firstToken).matches("[0-9a-f]{32}");
        second.release();
    }

    @Test
    void foreignClientHoldingTheKeyExcludesUsAndSurvivesOurRelease() {
        // Another client following the redis.io pattern holds the same key.
        assertThat(redis.command("SET", "lock:{order:3}", "foreign-token", "NX", "PX", "10000")).isEqualTo("OK");
        assertThat(instanceA.service.tryLock("order:3", null, Duration.ZERO)).isEmpty();

        redis.del("lock:{order:3}");
        LockHandle ours = instanceA.service.lock(LockRequest.of("order:3").withTtl(SHORT_TTL).withWatchdog(false));
        await().atMost(PATIENCE).until(() -> redis.get("lock:{order:3}") == null);
        redis.set("lock:{order:3}", "foreign-token");

        assertThat(ours.release()).isFalse();
        assertThat(redis.get("lock:{order:3}")).isEqualTo("foreign-token");
    }

    @Test
    void releaseAfterExpiryReturnsFalseAndKeepsTheNewHoldersLock() {
        LockHandle expired = instanceA.service.lock(LockRequest.of("order:4").withTtl(SHORT_TTL).withWatchdog(false));
        LockHandle newHolder = instanceB.service.lock("order:4", Duration.ofSeconds(10), Duration.ofSeconds(3));
        String newHoldersToken = redis.get("lock:{order:4}");

        assertThat(expired.release()).isFalse();

        assertThat(redis.get("lock:{order:4}")).isEqualTo(newHoldersToken);
        assertThat(newHolder.isHeld()).isTrue();
        assertThat(instanceA.service.tryLock("order:4", null, Duration.ZERO)).isEmpty();
        assertThat(newHolder.release()).isTrue();
    }

    @Test
    void releaseIsIdempotentAndOnlyTheFirstCallReportsTheDeletion() {
        LockHandle handle = instanceA.service.lock("order:5", null, Duration.ZERO);
        assertThat(handle.release()).isTrue();
        LockHandle next = instanceB.service.lock("order:5", null, Duration.ZERO);

        assertThat(handle.release()).isFalse();
        handle.close();

        assertThat(next.isHeld()).isTrue();
        assertThat(redis.get("lock:{order:5}")).isNotNull();
        next.release();
    }

    @Test
    void anyThreadMayReleaseTheHandle() throws Exception {
        LockHandle handle = instanceA.service.lock("order:6", null, Duration.ZERO);

        boolean released = CompletableFuture.supplyAsync(handle::release).get();

        assertThat(released).isTrue();
        assertThat(redis.get("lock:{order:6}")).isNull();
    }

    @Test
    void watchdogKeepsAShortLeaseAliveForFiveTtlsAndReleaseLeavesNothingBehind() {
        LockHandle handle = instanceA.service.lock(LockRequest.of("order:7").withTtl(WATCHDOG_TTL).withWatchdog(true));
        long heldSince = System.nanoTime();

        // For at least 5 × ttl, nobody else gets it and the key keeps a live lease.
        await().pollInterval(Duration.ofMillis(50)).atMost(Duration.ofSeconds(20)).until(() -> {
            assertThat(instanceB.service.tryLock("order:7", null, Duration.ZERO)).isEmpty();
            assertThat(handle.isHeld()).isTrue();
            assertThat(redis.pttl("lock:{order:7}")).isPositive();
            return Duration.ofNanos(System.nanoTime() - heldSince).compareTo(WATCHDOG_TTL.multipliedBy(5)) >= 0;
        });

        assertThat(handle.release()).isTrue();
        assertThat(redis.get("lock:{order:7}")).isNull();
        // No renewal that was in flight may bring the key back.
        await().during(WATCHDOG_TTL.multipliedBy(3)).atMost(PATIENCE).until(() -> redis.get("lock:{order:7}") == null);
        assertThat(instanceA.watchdog.watchedLeases()).isZero();
    }

    @Test
    void watchdogMarksTheHandleLostAndTellsItsListenersWhenTheKeyIsDeletedFromOutside() {
        LockHandle handle = instanceA.service.lock(LockRequest.of("order:8").withTtl(SHORT_TTL).withWatchdog(true));
        List<LockHandle> told = new CopyOnWriteArrayList<>();
        handle.onLost(told::add);
        assertThat(handle.isLost()).isFalse();

        redis.del("lock:{order:8}");

        await().atMost(PATIENCE).until(handle::isLost);
        assertThat(handle.isHeld()).isFalse();
        // The listeners run on the watchdog's listener thread, just after the handle is
        // marked lost.
        await().atMost(PATIENCE).until(() -> !told.isEmpty() && !instanceA.lostLeases.isEmpty());
        assertThat(told).containsExactly(handle);
        assertThat(instanceA.lostLeases).singleElement().asString().startsWith("order:8: the key is gone");
        assertThat(instanceA.watchdog.watchedLeases()).isZero();
        assertThat(handle.release()).isFalse();

        // A listener added after the loss runs at once, on the caller's thread.
        List<Thread> lateListener = new ArrayList<>();
        handle.onLost(lost -> lateListener.add(Thread.currentThread()));
        assertThat(lateListener).containsExactly(Thread.currentThread());
    }

    @Test
    void watchdogMarksTheHandleLostWhenAnotherOwnerTookTheKey() {
        LockHandle handle = instanceA.service.lock(LockRequest.of("order:9").withTtl(SHORT_TTL).withWatchdog(true));

        redis.set("lock:{order:9}", "someone-else");

        await().atMost(PATIENCE).until(() -> !handle.isHeld());
        assertThat(handle.release()).isFalse();
        assertThat(redis.get("lock:{order:9}")).isEqualTo("someone-else");
    }

    @Test
    void fixedLeaseIsNoLongerHeldOnceItsTtlHasPassed() {
        LockHandle handle = instanceA.service.lock(LockRequest.of("order:10").withTtl(SHORT_TTL).withWatchdog(false));
        assertThat(handle.isHeld()).isTrue();

        await().atMost(PATIENCE).until(() -> !handle.isHeld());
        await().atMost(PATIENCE).until(() -> redis.get("lock:{order:10}") == null);
    }

    @Test
    void watchdogRenewsManyLeasesInFewRoundTrips() {
        Duration ttl = Duration.ofMillis(1500);
        List<LockHandle> handles = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            handles.add(instanceA.service.lock(LockRequest.of("bulk:" + i).withTtl(ttl)));
        }
        redis.resetStats();
        long started = System.nanoTime();

        // At least two renewal periods of 500 ms, and at least two renewal calls: a busy
        // machine may take longer.
        await().atMost(PATIENCE)
            .until(() -> Duration.ofNanos(System.nanoTime() - started).toMillis() >= 1100 && redis.scriptCalls() >= 2);

        long renewCalls = redis.scriptCalls();
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
        // Batched, that is at most 20 calls per 700 ms of waiting; one call per lease
        // would be 300 per period.
        long fewCalls = 20 * (elapsed.toMillis() / 700 + 1);
        assertThat(renewCalls).isBetween(2L, fewCalls);
        assertThat(handles).allMatch(LockHandle::isHeld);
        // Without a renewal, no lease could have more left than what remains of the first
        // one.
        assertThat(redis.pttl("lock:{bulk:0}")).isGreaterThan(ttl.minus(elapsed).toMillis());
        handles.forEach(LockHandle::release);
    }

    @Test
    void fencingTokensStrictlyIncreaseOverAThousandAcquisitionsAcrossExpiriesAndInstances() {
        long previous = 0;
        for (int i = 0; i < 1000; i++) {
            DefaultLockService service = (i % 2 == 0 ? instanceA : instanceB).service;
            boolean letItExpire = i % 50 == 0;
            // Every lease is long enough to be used: a lease of a few ms may run out
            // before its reply
            // arrives on a busy machine, which the service rightly refuses.
            LockRequest request = LockRequest.of("fenced")
                .withWaitTime(Duration.ofSeconds(3))
                .withTtl(Duration.ofSeconds(10))
                .withWatchdog(false);
            // Tokens issued with the lock and tokens issued on demand share one sequence.
            // (A lock that had to be waited for comes with its token either way.)
            boolean upFront = i % 3 == 0;
            LockHandle handle = service.lock(upFront ? request.withFencingToken() : request);
            if (upFront) {
                assertThat(handle.issuedFencingToken()).as("acquisition %d", i).isPresent();
            }
            assertThat(handle.fencingToken()).as("acquisition %d", i).isGreaterThan(previous);
            previous = handle.fencingToken();
            if (letItExpire) {
                // The lease runs out in Redis, unreleased, once its token is drawn; the
                // next
                // acquisition starts only when the key is observably gone.
                redis.command("PEXPIRE", "lock:{fenced}", "1");
                await().atMost(Duration.ofSeconds(10)).until(() -> redis.get("lock:{fenced}") == null);
                assertThat(handle.release()).as("acquisition %d expired, not released", i).isFalse();
            }
            else {
                assertThat(handle.release()).isTrue();
            }
        }
    }

    @Test
    void fencingTokensKeepIncreasingWhenTheCounterKeyIsEvicted() {
        long before = instanceA.service.lock("evicted", null, Duration.ZERO).fencingToken();
        redis.del("lock:{evicted}", "lock:{evicted}:fence");

        long after = instanceB.service.lock("evicted", null, Duration.ZERO).fencingToken();

        assertThat(after).isGreaterThan(before);
    }

    @Test
    void fencingTokensKeepIncreasingWhenTheServerClockIsBehindTheCounter() {
        // As after the server clock stepped back an hour: the counter is ahead of the
        // clock.
        List<?> time = (List<?>) redis.command("TIME");
        long hourAhead = Long.parseLong((String) time.get(0)) * 1_000_000 + Long.parseLong((String) time.get(1))
                + Duration.ofHours(1).toNanos() / 1000;
        redis.set("lock:{clock}:fence", Long.toString(hourAhead));

        LockHandle firstHandle = instanceA.service.lock("clock", null, Duration.ZERO);
        long first = firstHandle.fencingToken();
        firstHandle.release();
        long second = instanceB.service.lock("clock", null, Duration.ZERO).fencingToken();

        assertThat(first).isEqualTo(hourAhead + 1);
        assertThat(second).isEqualTo(hourAhead + 2);
        assertThat(redis.get("lock:{clock}:fence")).isEqualTo(Long.toString(second));
    }

    @ParameterizedTest(name = "counter holding \"{0}\"")
    @ValueSource(strings = { "41", "not-a-counter", "1700000000000000.5", "zzzzzzzzzzzzzzzz" })
    void aCounterKeyThatIsNotOneOfOursIsReplacedByServerTime(String foreignValue) {
        redis.set("lock:{foreign}:fence", foreignValue);
        List<?> time = (List<?>) redis.command("TIME");
        long serverMicros = Long.parseLong((String) time.get(0)) * 1_000_000 + Long.parseLong((String) time.get(1));

        LockHandle handle = instanceA.service.lock("foreign", null, Duration.ZERO);

        assertThat(handle.fencingToken()).isBetween(serverMicros,
                serverMicros + Duration.ofMinutes(1).toNanos() / 1000);
        assertThat(redis.get("lock:{foreign}:fence")).isEqualTo(Long.toString(handle.fencingToken()));
        handle.release();
    }

    @Test
    void everyIssuedTokenRenewsTheCountersExpiry() {
        try (LockHandle handle = instanceA.service.lock("renewed", null, Duration.ZERO)) {
            handle.fencingToken();
        }
        redis.command("PEXPIRE", "lock:{renewed}:fence", "5000");

        try (LockHandle handle = instanceB.service.lock("renewed", null, Duration.ZERO)) {
            handle.fencingToken();
        }

        assertThat(redis.pttl("lock:{renewed}:fence")).isBetween(Duration.ofDays(1).minusMinutes(1).toMillis(),
                Duration.ofDays(1).toMillis());
    }

    @Test
    void aFreeLockIsTakenWithOneBareSetAndReleasedWithOneScript() {
        redis.resetStats();

        LockHandle handle = instanceA.service.lock("bare", null, Duration.ofSeconds(3));

        assertThat(redis.commandCalls("set")).isEqualTo(1);
        assertThat(redis.scriptCalls()).as("no script on acquisition").isZero();
        assertThat(redis.commandCalls("time")).as("no fencing token drawn").isZero();
        assertThat(redis.get("lock:{bare}:fence")).isNull();
        assertThat(handle.issuedFencingToken()).isEmpty();
        assertThat(instanceA.waiters.waiting()).as("nobody registered to wait").isZero();

        assertThat(handle.release()).isTrue();
        assertThat(redis.scriptCalls()).isEqualTo(1);
        assertThat(redis.dbSize()).isZero();
    }

    @Test
    void theFencingTokenOfALockTakenWhileFreeIsDrawnOnItsFirstRequestOnly() {
        try (LockHandle handle = instanceA.service.lock("on-demand", null, Duration.ZERO)) {
            redis.resetStats();

            long fence = handle.fencingToken();

            assertThat(redis.get("lock:{on-demand}:fence")).isEqualTo(Long.toString(fence));
            assertThat(handle.issuedFencingToken()).hasValue(fence);
            assertThat(handle.fencingToken()).isEqualTo(fence);
            assertThat(redis.commandCalls("time")).as("drawn once, then kept in the handle").isEqualTo(1);
            assertThat(handle.toString()).contains("fencingToken=" + fence);
        }
    }

    @Test
    void aFencingTokenRequestedWithTheLockComesInTheAcquisitionsRoundTrip() {
        redis.resetStats();

        try (LockHandle handle = instanceA.service
            .lock(LockRequest.of("up-front").withWaitTime(Duration.ZERO).withFencingToken())) {

            assertThat(handle.issuedFencingToken()).isPresent();
            assertThat(redis.scriptCalls()).isEqualTo(1);
            assertThat(redis.get("lock:{up-front}:fence")).isEqualTo(Long.toString(handle.fencingToken()));
            assertThat(redis.scriptCalls()).as("no second round trip").isEqualTo(1);
        }
    }

    @Test
    void concurrentFirstRequestsForTheFencingTokenAllGetTheSameOne() throws Exception {
        try (LockHandle handle = instanceA.service.lock("racing", null, Duration.ZERO)) {
            List<CompletableFuture<Long>> requests = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                requests.add(CompletableFuture.supplyAsync(handle::fencingToken));
            }
            List<Long> tokens = new ArrayList<>();
            for (CompletableFuture<Long> request : requests) {
                tokens.add(request.get());
            }

            assertThat(tokens).containsOnly(handle.fencingToken());
        }
    }

    @Test
    void aHolderWhoseLeaseRanOutGetsNoFencingTokenAndTheNextHolderIsNotDisturbed() {
        LockHandle expired = instanceA.service
            .lock(LockRequest.of("late").withTtl(SHORT_TTL).withWatchdog(false).withWaitTime(Duration.ZERO));
        await().atMost(Duration.ofSeconds(20)).until(() -> redis.get("lock:{late}") == null);
        LockHandle next = instanceB.service.lock("late", null, Duration.ZERO);
        long nextFence = next.fencingToken();

        assertThatThrownBy(expired::fencingToken).isInstanceOf(LockLostException.class)
            .hasMessageContaining("'late'")
            .hasMessageContaining("lock:{late}")
            .hasMessageContaining("no fencing token can be issued")
            .hasMessageContaining("withFencingToken()");
        assertThat(expired.issuedFencingToken()).isEmpty();
        assertThat(redis.get("lock:{late}:fence")).as("the counter did not move").isEqualTo(Long.toString(nextFence));
        assertThat(next.isHeld()).isTrue();
        next.release();
    }

    @Test
    void aReleasedHandleGetsNoFencingToken() {
        LockHandle handle = instanceA.service.lock("gone", null, Duration.ZERO);
        handle.release();

        assertThatThrownBy(handle::fencingToken).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("'gone' was released")
            .hasMessageContaining("before release()");
        assertThat(redis.get("lock:{gone}:fence")).isNull();
    }

    @Test
    void lockThrowsLockTimeoutExceptionNamingTheKeyWhenTheWaitRunsOut() {
        LockHandle holder = instanceA.service.lock("busy", null, Duration.ZERO);

        assertThatThrownBy(() -> instanceB.service.lock("busy", null, Duration.ofMillis(200)))
            .isInstanceOf(LockTimeoutException.class)
            .hasMessageContaining("'busy'")
            .hasMessageContaining("PT0.2S");
        holder.release();
    }

    @Test
    void callLockedRunsTheActionUnderTheLockAndReleasesItEvenWhenTheActionThrows() throws Exception {
        String seen = instanceA.service.callLocked("job", null, null, () -> redis.get("lock:{job}"));
        assertThat(seen).isNotNull();
        assertThat(redis.get("lock:{job}")).isNull();

        IllegalStateException failure = new IllegalStateException("boom");
        assertThatThrownBy(() -> instanceA.service.callLocked("job", null, null, () -> {
            throw failure;
        })).isSameAs(failure);
        assertThat(redis.get("lock:{job}")).isNull();
    }

    @Test
    void callLockedDoesNotRunTheActionWhenTheLockIsHeldElsewhere() {
        LockHandle holder = instanceB.service.lock("job2", null, Duration.ZERO);
        AtomicBoolean ran = new AtomicBoolean();

        assertThatThrownBy(() -> instanceA.service.callLocked("job2", null, Duration.ZERO, () -> ran.getAndSet(true)))
            .isInstanceOf(LockTimeoutException.class);
        assertThat(ran).isFalse();
        holder.release();
    }

    @Test
    void badRequestsAreRejectedWithAClearMessage() {
        assertThatThrownBy(() -> instanceA.service.tryLock(" ", null, null))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("blank");
        assertThatThrownBy(() -> instanceA.service.tryLock("k", Duration.ZERO, null))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("ttl");
        assertThatThrownBy(() -> instanceA.service.tryLock("k", null, Duration.ofSeconds(-1)))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("must not be negative");
    }

}
