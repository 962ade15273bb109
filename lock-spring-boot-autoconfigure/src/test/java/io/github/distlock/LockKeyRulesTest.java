package io.github.distlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.distlock.InvalidLockKeyException.Reason;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockProperties;
import io.github.distlock.segment.SegmentedLock;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * The key rule of every {@link LockService} call made directly: a {@code null}, blank or
 * too long key fails with {@link InvalidLockKeyException}, still an
 * {@link IllegalArgumentException}, before anything reaches Redis. Through the
 * auto-configured service, so {@code distributed-lock.max-key-length} is what sets the
 * limit.
 */
class LockKeyRulesTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(BootAutoConfigurations.REDIS, DistributedLockAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
                    // Nothing here is about timeouts: roomy for a loaded machine's first
                    // connection.
                    "distributed-lock.operation-timeout=15s");
    }

    @Test
    void theDefaultMaximumIs1024CharactersOfTheKeyAsGivenWithoutThePrefix() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            assertThat(context.getBean(DistributedLockProperties.class).getMaxKeyLength()).isEqualTo(1024);
            assertThat(locks.maxKeyLength()).isEqualTo(1024);

            try (LockHandle longest = locks.lock("k".repeat(1024), null, Duration.ZERO)) {
                assertThat(redis.server().get("lock:{" + "k".repeat(1024) + "}")).isNotNull();
            }
            InvalidLockKeyException refused = catchThrowableOfType(InvalidLockKeyException.class,
                    () -> locks.lock("k".repeat(1025), null, Duration.ZERO));
            assertThat(refused).isInstanceOf(IllegalArgumentException.class);
            assertThat(refused.getReason()).isEqualTo(Reason.TOO_LONG);
            assertThat(refused.getKeyLength()).isEqualTo(1025);
            assertThat(refused.getMaxKeyLength()).isEqualTo(1024);
            assertThat(refused.getKeyStart()).isEqualTo("k".repeat(50));
            assertThat(refused.getMessage()).isEqualTo("The lock key is 1025 characters long, longer than "
                    + "distributed-lock.max-key-length (1024): '" + "k".repeat(50) + "'... (its first 50 characters). "
                    + "Nothing was locked. Lock on a short identifier of the resource (an id, or a hash of a long "
                    + "value), or raise distributed-lock.max-key-length.");
        });
    }

    @Test
    void aKeyLongerThanTheConfiguredMaximumIsRefusedByEveryLockServiceMethodBeforeAnythingIsSent() {
        runner().withPropertyValues("distributed-lock.max-key-length=16").run(context -> {
            LockService locks = context.getBean(LockService.class);
            String tooLong = "order:" + "1".repeat(11);
            AtomicBoolean ran = new AtomicBoolean();
            List<Consumer<String>> calls = everyCall(locks, ran);
            redis.server().resetStats();

            for (Consumer<String> call : calls) {
                InvalidLockKeyException refused = catchThrowableOfType(InvalidLockKeyException.class,
                        () -> call.accept(tooLong));
                assertThat(refused).as("call %d", calls.indexOf(call)).isNotNull();
                assertThat(refused.getReason()).isEqualTo(Reason.TOO_LONG);
                assertThat(refused.getMessage()).contains("17 characters long",
                        "longer than distributed-lock.max-key-length (16)", "'" + tooLong + "'");
            }
            // lockAll checks every key first: the valid "a" was not taken and released
            // either.
            assertThat(redis.server().commandCalls("set") + redis.server().scriptCalls()).isZero();
            assertThat(ran).isFalse();
            try (LockHandle longest = locks.lock("order:" + "1".repeat(10), null, Duration.ZERO)) {
                assertThat(longest.isHeld()).isTrue();
            }
        });
    }

    @Test
    void aNullOrBlankKeyIsRefusedByEveryLockServiceMethodBeforeAnythingIsSent() {
        runner().run(context -> {
            LockService locks = context.getBean(LockService.class);
            AtomicBoolean ran = new AtomicBoolean();
            List<Consumer<String>> calls = everyCall(locks, ran);
            redis.server().resetStats();

            for (String blank : new String[] { null, "", " \t" }) {
                for (Consumer<String> call : calls) {
                    InvalidLockKeyException refused = catchThrowableOfType(InvalidLockKeyException.class,
                            () -> call.accept(blank));
                    assertThat(refused).as("call %d with %s", calls.indexOf(call), blank).isNotNull();
                    assertThat(refused.getReason()).isEqualTo(Reason.BLANK);
                    assertThat(refused.getMessage())
                        .contains("must not be null or blank, was " + LockKeys.printable(blank));
                }
            }
            assertThat(redis.server().commandCalls("set") + redis.server().scriptCalls()).isZero();
            assertThat(ran).isFalse();
        });
    }

    @Test
    void aSegmentedLockChecksItsKeyAndItsLongestSegmentKeyWhenCreated() {
        runner().withPropertyValues("distributed-lock.max-key-length=16").run(context -> {
            LockService locks = context.getBean(LockService.class);

            InvalidLockKeyException blank = catchThrowableOfType(InvalidLockKeyException.class,
                    () -> new SegmentedLock(locks, LockRequest.of(" "), 4));
            assertThat(blank.getReason()).isEqualTo(Reason.BLANK);
            assertThat(blank.getMessage()).startsWith("The key of this SegmentedLock must not be null or blank");
            // "stock:sku-12#9" fits, "stock:sku-1234#10" does not.
            assertThat(new SegmentedLock(locks, LockRequest.of("stock:sku-12"), 10).key(9)).hasSize(14);
            InvalidLockKeyException tooLong = catchThrowableOfType(InvalidLockKeyException.class,
                    () -> new SegmentedLock(locks, LockRequest.of("stock:sku-1234"), 11));
            assertThat(tooLong.getReason()).isEqualTo(Reason.TOO_LONG);
            assertThat(tooLong.getMessage()).startsWith("The key of segment 10 of this SegmentedLock is 17 characters "
                    + "long, longer than distributed-lock.max-key-length (16): 'stock:sku-1234#10'");
        });
    }

    @Test
    void aMessageShowsControlCharactersOfTheKeyEscapedAndNeverMoreThanItsFirst50Characters() {
        String key = "line\nbreak" + "z".repeat(5_000);
        InvalidLockKeyException refused = catchThrowableOfType(InvalidLockKeyException.class,
                () -> LockKeys.requireValid(key, 1024));

        assertThat(refused.getMessage()).contains("'line\\nbreak" + "z".repeat(40) + "'... (its first 50 characters)")
            .doesNotContain("\n")
            .doesNotContain("z".repeat(41));
        assertThat(refused.getKeyStart()).isEqualTo(key.substring(0, 50));
    }

    /**
     * Each way a key enters a LockService; {@code ran} is set if any guarded action runs.
     */
    private static List<Consumer<String>> everyCall(LockService locks, AtomicBoolean ran) {
        List<Consumer<String>> calls = new ArrayList<>();
        calls.add(key -> locks.lock(key, null, Duration.ZERO));
        calls.add(key -> locks.tryLock(key, null, Duration.ZERO));
        calls.add(key -> locks.lock(LockRequest.of(key).withWaitTime(Duration.ZERO)));
        calls.add(key -> locks.tryLock(LockRequest.of(key).withFencingToken()));
        calls.add(key -> {
            try {
                locks.callLocked(key, null, Duration.ZERO, () -> ran.getAndSet(true));
            }
            catch (RuntimeException ex) {
                throw ex;
            }
            catch (Exception ex) {
                throw new AssertionError(ex);
            }
        });
        // Sorted, "a" comes first: a check per key as it is taken would take "a" before
        // refusing the other.
        calls.add(key -> locks.lockAll(listOf("a", key), null, Duration.ZERO));
        calls.add(key -> locks.tryLockAll(listOf("a", key), null, Duration.ZERO));
        calls.add(key -> locks.lockAll(List.of(LockRequest.of("a"), LockRequest.of(key))));
        calls.add(key -> Optional.of(locks.tryLockAll(List.of(LockRequest.of("a"), LockRequest.of(key)))));
        return calls;
    }

    /** List.of refuses null elements. */
    private static List<String> listOf(String... keys) {
        return Arrays.asList(keys);
    }

}
