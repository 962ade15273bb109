package io.github.distlock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * The single-Redis backend's wire format, which the guide documents as stable and
 * interoperable: kept apart from the contract, which another backend (Redlock) satisfies
 * with another layout.
 */
class SingleRedisWireFormatTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    /**
     * The compare-and-delete of the single-instance pattern on redis.io, as a foreign
     * client runs it.
     */
    private static final String FOREIGN_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then "
            + "return redis.call('del', KEYS[1]) else return 0 end";

    private static StandaloneRedis redis;

    private static ContractApplication application;

    @BeforeAll
    static void start() {
        redis = StandaloneRedis.start();
        application = ContractApplication.start(redis.springProperties());
    }

    @AfterAll
    static void stop() {
        if (application != null) {
            application.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @BeforeEach
    void empty() {
        redis.reset();
    }

    @Test
    void aLockIsAPlainStringKeyUnderThePrefixHoldingAFresh128BitTokenWithTheTtlAsItsLease() {
        String token;
        try (LockHandle held = locks().lock("order:42", TTL, Duration.ZERO)) {
            assertThat(server().command("TYPE", "lock:{order:42}")).isEqualTo("string");
            token = server().get("lock:{order:42}");
            assertThat(token).matches("[0-9a-f]{32}");
            assertThat(server().pttl("lock:{order:42}")).isPositive().isLessThanOrEqualTo(TTL.toMillis());
        }
        try (LockHandle again = locks().lock("order:42", TTL, Duration.ZERO)) {
            assertThat(server().get("lock:{order:42}")).as("a fresh token for every acquisition")
                .matches("[0-9a-f]{32}")
                .isNotEqualTo(token);
        }
        assertThat(server().scan("lock:*")).as("released: no key left").isEmpty();
    }

    @Test
    void aForeignClientFollowingTheRedisIoPatternExcludesUsAndIsExcludedByUs() {
        assertThat(server().command("SET", "lock:{report}", "foreign-token", "NX", "PX", "30000")).isEqualTo("OK");

        assertThat(locks().tryLock("report", TTL, Duration.ZERO)).as("excluded by the foreign holder").isEmpty();

        assertThat(server().command("EVAL", FOREIGN_RELEASE, "1", "lock:{report}", "foreign-token")).isEqualTo(1L);
        try (LockHandle held = locks().lock("report", TTL, Duration.ZERO)) {
            assertThat(server().command("SET", "lock:{report}", "foreign-token", "NX", "PX", "30000"))
                .as("the foreign client is excluded by us")
                .isNull();
            assertThat(server().command("EVAL", FOREIGN_RELEASE, "1", "lock:{report}", "foreign-token"))
                .as("and cannot release our lock")
                .isEqualTo(0L);
            assertThat(held.isHeld()).isTrue();
        }
    }

    @Test
    void theFencingCounterLivesNextToTheLockAndHoldsTheLastToken() {
        try (LockHandle held = locks().lock(LockRequest.of("account:7").withTtl(TTL).withWaitTime(Duration.ZERO))) {
            long token = held.fencingToken();

            assertThat(server().get("lock:{account:7}:fence")).isEqualTo(Long.toString(token));
            assertThat(server().pttl("lock:{account:7}:fence")).as("outlives the lease").isGreaterThan(TTL.toMillis());
        }
        assertThat(server().scan("lock:*")).containsExactly("lock:{account:7}:fence");
    }

    @Test
    void aNameWithBracesIsPercentEncodedWithATrailingPercent() {
        try (LockHandle held = locks().lock("a}b", TTL, Duration.ZERO)) {
            assertThat(server().scan("lock:*")).containsExactly("lock:{a%7Db}%");
        }
    }

    @Test
    void aWaiterIsQueuedInASortedSetAndAHashNextToTheLock() {
        LockHandle holder = locks().lock("queued", TTL, Duration.ZERO);
        CompletableFuture<Optional<LockHandle>> waiter = CompletableFuture
            .supplyAsync(() -> locks().tryLock("queued", TTL, Duration.ofSeconds(30)));

        await().atMost(Duration.ofSeconds(20))
            .until(() -> Long.valueOf(1).equals(server().command("ZCARD", "lock:{queued}:queue")));
        assertThat(server().command("HLEN", "lock:{queued}:waiting")).isEqualTo(1L);
        @SuppressWarnings("unchecked")
        List<String> queued = (List<String>) server().command("ZRANGE", "lock:{queued}:queue", "0", "-1");
        String waiterToken = queued.get(0);
        assertThat(holder.release()).isTrue();

        LockHandle handedOver = waiter.join().orElseThrow();
        assertThat(server().get("lock:{queued}")).as("the hand-over wrote the waiter's token").isEqualTo(waiterToken);
        assertThat(handedOver.release()).isTrue();
        assertThat(server().scan("lock:{queued}*")).as("queue and waiter entry gone")
            .containsOnly("lock:{queued}:fence");
    }

    private static LockService locks() {
        return application.lockService();
    }

    private static RedisTestServer server() {
        return redis.server();
    }

}
