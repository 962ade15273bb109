package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockBackendException;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Connecting is bounded by the operation timeout for every caller at once: against a
 * Redis that hangs before the first use, callers do not queue one behind the other, each
 * waiting the client's own connect and command timeouts (a minute here, as in Lettuce's
 * default).
 */
class ConnectBoundTest {

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    @Test
    void concurrentFirstCallsToAHungRedisEachFailWithinTheOperationTimeout() throws Exception {
        RedisTestServer redis = redisExtension.server();
        redis.pause();
        try (LockServiceConnection instance = new LockServiceConnection(redis, Duration.ofMillis(500), true)) {
            List<CompletableFuture<Duration>> callers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                String key = "connect:" + i;
                callers.add(CompletableFuture.supplyAsync(() -> {
                    long started = System.nanoTime();
                    try {
                        instance.service.tryLock(key, Duration.ofSeconds(30), Duration.ZERO);
                        throw new AssertionError("acquired from a hung Redis");
                    }
                    catch (LockBackendException expected) {
                        return Duration.ofNanos(System.nanoTime() - started);
                    }
                }));
            }
            for (CompletableFuture<Duration> caller : callers) {
                // Generous: one 500 ms bound each, far below the client's 60 s; before
                // the fix the
                // callers failed one after another, each after a full client timeout.
                assertThat(caller.get(30, TimeUnit.SECONDS)).isLessThan(Duration.ofSeconds(10));
            }
        }
        finally {
            redis.resume();
        }
    }

}
