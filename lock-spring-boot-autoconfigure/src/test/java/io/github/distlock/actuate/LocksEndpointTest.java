package io.github.distlock.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.actuate.DistributedLockActuatorAutoConfiguration;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * The {@code locks} endpoint against a real Redis, on both drivers (Lettuce's native
 * backend and Spring Data's on Jedis): this instance's holders and waiters with what an
 * operator needs, a key's state as Redis holds it, and never a holder's random token
 * anywhere in the output.
 */
class LocksEndpointTest {

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private static final ObjectMapper json = new ObjectMapper();

    private void run(String driver, ContextConsumer<AssertableApplicationContext> test) {
        RedisTestServer redis = redisExtension.server();
        new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(BootAutoConfigurations.REDIS, DistributedLockAutoConfiguration.class,
                            EndpointAutoConfiguration.class, DistributedLockActuatorAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
                    "spring.data.redis.client-type=" + driver, "management.endpoints.web.exposure.include=locks",
                    // Only distributed-lock.operation-timeout may end a call to a store
                    // that does not answer:
                    // the client's own timeout (Jedis's read timeout, also 2 s) raced it
                    // on a loaded machine.
                    "spring.data.redis.timeout=60s")
            .run(context -> {
                // A cold client's first connect can outlast one operation timeout on a
                // loaded machine.
                LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
                await().atMost(Duration.ofSeconds(20)).until(() -> endpoint.lock("warm-up").error() == null);
                test.accept(context);
            });
    }

    @ParameterizedTest
    @ValueSource(strings = { "lettuce", "jedis" })
    void aHolderIsListedWithKeyNameSinceLeaseRenewalsFencingTokenAndThreadButNeverItsToken(String driver) {
        run(driver, context -> {
            LockService locks = context.getBean(LockService.class);
            LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
            Instant before = Instant.now();
            try (LockHandle fenced = locks
                .lock(LockRequest.of("order:42").withName("orders").withTtl(Duration.ofMillis(900)).withFencingToken());
                    LockHandle plain = locks.lock(LockRequest.of("report").withTtl(Duration.ofSeconds(30)))) {
                // A 900 ms lease is renewed every 300 ms: wait for one renewal to be
                // counted.
                await().atMost(Duration.ofSeconds(10)).until(() -> endpoint.locks().held().get(0).renewals() >= 1);
                LocksEndpoint.Locks listed = endpoint.locks();
                assertThat(listed.waiting()).isEmpty();
                assertThat(listed.held()).extracting(LocksEndpoint.Holder::key).containsExactly("order:42", "report");

                LocksEndpoint.Holder holder = listed.held().get(0);
                assertThat(holder.name()).isEqualTo("orders");
                assertThat(holder.redisKey()).isEqualTo("lock:{order:42}");
                assertThat(holder.thread()).isEqualTo(Thread.currentThread().getName());
                assertThat(Instant.parse(holder.since())).isBetween(before, Instant.now());
                assertThat(holder.leaseLeftMillis()).isPositive().isLessThanOrEqualTo(900);
                assertThat(holder.ttlMillis()).isEqualTo(900);
                assertThat(holder.watchdog()).isTrue();
                assertThat(holder.fencingTokenIssued()).isTrue();
                assertThat(holder.fencingToken()).isEqualTo(fenced.fencingToken());

                LocksEndpoint.Holder other = listed.held().get(1);
                assertThat(other.name()).isEqualTo("unnamed");
                assertThat(other.fencingTokenIssued()).isFalse();
                assertThat(other.fencingToken()).isNull();
                assertThat(other.renewals()).isZero();

                String output = json.writeValueAsString(listed) + json.writeValueAsString(endpoint.lock("order:42"))
                        + json.writeValueAsString(endpoint.lock("report"));
                String fencedToken = redisExtension.server().get("lock:{order:42}");
                String plainToken = redisExtension.server().get("lock:{report}");
                assertThat(fencedToken).hasSizeGreaterThan(16);
                assertThat(plainToken).hasSizeGreaterThan(16);
                assertThat(output).contains("order:42").doesNotContain(fencedToken).doesNotContain(plainToken);
            }
            assertThat(endpoint.locks().held()).isEmpty();
        });
    }

    @ParameterizedTest
    @ValueSource(strings = { "lettuce", "jedis" })
    void aWaiterIsListedWithHowLongItHasWaitedAndBecomesTheHolder(String driver) {
        run(driver, context -> {
            LockService locks = context.getBean(LockService.class);
            LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
            LockHandle holder = locks.lock("hot", Duration.ofSeconds(30), Duration.ZERO);
            CompletableFuture<LockHandle> waiter = new CompletableFuture<>();
            Thread thread = new Thread(
                    () -> waiter.complete(locks.lock("hot", Duration.ofSeconds(30), Duration.ofSeconds(30))),
                    "waiting-caller");
            thread.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> !endpoint.locks().waiting().isEmpty());
            await().atMost(Duration.ofSeconds(10))
                .until(() -> endpoint.locks().waiting().get(0).waitingForMillis() >= 50);
            LocksEndpoint.Waiter waiting = endpoint.locks().waiting().get(0);
            assertThat(waiting.key()).isEqualTo("hot");
            assertThat(waiting.thread()).isEqualTo("waiting-caller");
            assertThat(Instant.parse(waiting.since())).isBefore(Instant.now());

            LocksEndpoint.KeyState state = endpoint.lock("hot");
            assertThat(state.held()).isTrue();
            assertThat(state.queueLength()).isEqualTo(1);
            assertThat(state.heldHere()).singleElement()
                .extracting(LocksEndpoint.Holder::thread)
                .isEqualTo(Thread.currentThread().getName());
            assertThat(state.waitingHere()).singleElement()
                .extracting(LocksEndpoint.Waiter::thread)
                .isEqualTo("waiting-caller");

            holder.release();
            LockHandle second = waiter.get(10, TimeUnit.SECONDS);
            LocksEndpoint.Locks after = endpoint.locks();
            assertThat(after.waiting()).isEmpty();
            assertThat(after.held()).singleElement().satisfies(held -> {
                assertThat(held.thread()).isEqualTo("waiting-caller");
                assertThat(held.waitedMillis()).isGreaterThanOrEqualTo(50);
            });
            second.release();
        });
    }

    @ParameterizedTest
    @ValueSource(strings = { "lettuce", "jedis" })
    void aKeysStateIsReadFromRedisHeldOrFreeWithItsLeaseQueueAndLastFencingToken(String driver) {
        run(driver, context -> {
            LockService locks = context.getBean(LockService.class);
            LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);

            LocksEndpoint.KeyState free = endpoint.lock("orders", "7");
            assertThat(free.key()).isEqualTo("orders/7");
            assertThat(free.redisKey()).isEqualTo("lock:{orders/7}");
            assertThat(free.held()).as(free.error()).isFalse();
            assertThat(free.pttlMillis()).isEqualTo(-2);
            assertThat(free.queueLength()).isZero();
            assertThat(free.lastFencingToken()).isNull();
            assertThat(free.error()).isNull();

            long fence;
            try (LockHandle handle = locks.lock(LockRequest.of("orders/7").withTtl(Duration.ofSeconds(30)))) {
                fence = handle.fencingToken();
                LocksEndpoint.KeyState held = endpoint.lock("orders", "7");
                assertThat(held.held()).isTrue();
                assertThat(held.pttlMillis()).isPositive().isLessThanOrEqualTo(30_000);
                assertThat(held.lastFencingToken()).isEqualTo(fence);
                assertThat(held.heldHere()).hasSize(1);
            }
            LocksEndpoint.KeyState released = endpoint.lock("orders", "7");
            assertThat(released.held()).isFalse();
            assertThat(released.pttlMillis()).isEqualTo(-2);
            // The counter outlives the lock: the next holder's token is larger.
            assertThat(released.lastFencingToken()).isEqualTo(fence);
            assertThat(released.heldHere()).isEmpty();

            // A foreign client's lock without expiry is held for good, as PTTL says.
            redisExtension.server().set("lock:{foreign}", "someone");
            assertThat(endpoint.lock("foreign").pttlMillis()).isEqualTo(-1);
            assertThat(endpoint.lock("foreign").held()).isTrue();
        });
    }

    @ParameterizedTest
    @ValueSource(strings = { "lettuce" })
    void aLeaseWithoutWatchdogThatRanOutUnreleasedLeavesTheList(String driver) {
        run(driver, context -> {
            LockService locks = context.getBean(LockService.class);
            LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
            LockHandle forgotten = locks
                .lock(LockRequest.of("forgotten").withTtl(Duration.ofMillis(300)).withWatchdog(false));
            assertThat(endpoint.locks().held()).extracting(LocksEndpoint.Holder::key).containsExactly("forgotten");
            // Never released, and nobody renews it: once its lease is over, it is not
            // held by anyone here.
            await().atMost(Duration.ofSeconds(10)).until(() -> !forgotten.isHeld());
            assertThat(endpoint.locks().held()).isEmpty();
        });
    }

    @ParameterizedTest
    @ValueSource(strings = { "lettuce", "jedis" })
    void aStoreThatDoesNotAnswerIsReportedInsteadOfFailingTheEndpoint(String driver) {
        run(driver, context -> {
            LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
            RedisTestServer redis = redisExtension.server();
            redis.pause();
            try {
                LocksEndpoint.KeyState state = endpoint.lock("k");
                assertThat(state.held()).isNull();
                assertThat(state.error()).contains("distributed-lock.operation-timeout");
            }
            finally {
                redis.resume();
            }
        });
    }

}
