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
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.MultiLockHandle;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * {@code LockService.lockAll}/{@code tryLockAll} against a real redis-server: sorted
 * order, duplicates locked once, all or none, one wait for all keys.
 */
class MultiKeyLockTest {

    private static final Duration LONG_WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisTestServer redis;

    private LockServiceConnection instanceA;

    private LockServiceConnection instanceB;

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        instanceA = new LockServiceConnection(redis);
        instanceB = new LockServiceConnection(redis);
    }

    @AfterEach
    void disconnect() throws Exception {
        instanceA.close();
        instanceB.close();
    }

    @Test
    void locksEveryDistinctKeyInSortedOrderAndReleasesThemTogether() {
        MultiLockHandle locks = instanceA.service.lockAll(List.of("account:2", "account:1", "account:2"), null,
                Duration.ZERO);

        assertThat(locks.keys()).containsExactly("account:1", "account:2");
        assertThat(locks.isHeld()).isTrue();
        assertThat(exists("account:1")).isTrue();
        assertThat(exists("account:2")).isTrue();
        assertThat(instanceB.service.tryLock("account:2", null, Duration.ZERO)).isEmpty();

        assertThat(locks.release()).isTrue();
        assertThat(locks.isHeld()).isFalse();
        assertThat(exists("account:1")).isFalse();
        assertThat(exists("account:2")).isFalse();
    }

    @Test
    void oneKeyHeldElsewhereMeansNoneIsTakenAndTheTakenOnesAreReleased() {
        LockHandle middle = instanceB.service.lock("m", null, Duration.ZERO);

        assertThat(instanceA.service.tryLockAll(List.of("z", "m", "a"), null, Duration.ZERO)).isEmpty();
        // "a" was taken before "m" failed and released again; "z" was never asked for.
        assertThat(exists("a")).isFalse();
        assertThat(exists("z")).isFalse();
        assertThatThrownBy(() -> instanceA.service.lockAll(List.of("z", "m", "a"), null, Duration.ZERO))
            .isInstanceOfSatisfying(LockTimeoutException.class, timeout -> assertThat(timeout.getKey()).isEqualTo("m"));
        assertThat(exists("a")).isFalse();

        middle.release();
        Optional<MultiLockHandle> all = instanceA.service.tryLockAll(List.of("z", "m", "a"), null, Duration.ZERO);
        assertThat(all).isPresent();
        all.get().close();
    }

    @Test
    void aRequestThatFailsAfterOthersWereTakenReleasesThemBeforeTheExceptionPropagates() {
        // Sorted, "a" is taken first; "b" then fails validation.
        List<LockRequest> requests = List.of(LockRequest.of("b").withTtl(Duration.ZERO), LockRequest.of("a"));

        assertThatThrownBy(() -> instanceA.service.lockAll(requests)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("ttl");
        assertThat(exists("a")).isFalse();
        assertThat(instanceB.service.tryLock("a", null, Duration.ZERO)).isPresent()
            .get()
            .satisfies(LockHandle::release);
    }

    @Test
    void theSameKeyWithDifferentOptionsIsRejectedBeforeAnythingIsTaken() {
        List<LockRequest> requests = List.of(LockRequest.of("a"), LockRequest.of("b"),
                LockRequest.of("b").withWatchdog(false));

        assertThatThrownBy(() -> instanceA.service.lockAll(requests)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("'b'")
            .hasMessageContaining("twice");
        assertThat(exists("a")).isFalse();
        assertThatThrownBy(() -> instanceA.service.lockAll(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aLaterKeyIsWaitedForWithinTheSharedWaitWhileTheEarlierOnesStayHeld() throws Exception {
        LockHandle second = instanceB.service.lock("k2", null, Duration.ZERO);

        CompletableFuture<MultiLockHandle> both = CompletableFuture
            .supplyAsync(() -> instanceA.service.lockAll(List.of("k2", "k1"), null, LONG_WAIT));
        await().atMost(10, TimeUnit.SECONDS).until(() -> exists("k1"));
        assertThat(both).isNotDone();

        second.release();
        MultiLockHandle locks = both.get(15, TimeUnit.SECONDS);
        assertThat(locks.keys()).containsExactly("k1", "k2");
        assertThat(locks.handles()).allMatch(LockHandle::isHeld);
        locks.release();
    }

    @Test
    void callersListingTheSameKeysInOppositeOrdersNeverTimeOut() throws Exception {
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (List<String> keys : List.of(List.of("x", "y"), List.of("y", "x"))) {
            LockServiceConnection instance = (keys.get(0).equals("x") ? instanceA : instanceB);
            workers.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 50; i++) {
                    try (MultiLockHandle locks = instance.service.lockAll(keys, null, LONG_WAIT)) {
                        assertThat(locks.isHeld()).isTrue();
                    }
                    catch (Throwable ex) {
                        failures.add(ex);
                    }
                }
            }));
        }
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

        assertThat(failures).isEmpty();
        assertThat(exists("x")).isFalse();
        assertThat(exists("y")).isFalse();
    }

    @Test
    void eachHandleCarriesItsOwnFencingToken() {
        try (MultiLockHandle locks = instanceA.service
            .lockAll(List.of(LockRequest.of("ledger").withFencingToken(), LockRequest.of("audit")))) {
            assertThat(locks.handle("ledger").issuedFencingToken()).isPresent();
            assertThat(locks.handle("audit").fencingToken()).isPositive();
            assertThatThrownBy(() -> locks.handle("other")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("audit");
        }
    }

    private boolean exists(String key) {
        return Long.valueOf(1).equals(redis.command("EXISTS", "lock:{" + key + "}"));
    }

}
