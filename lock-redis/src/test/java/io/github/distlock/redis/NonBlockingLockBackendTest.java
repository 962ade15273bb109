package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.LockBackend.AcquireResult;
import io.github.distlock.core.LockKey;
import io.github.distlock.testsupport.RedisServerBinary;
import io.github.distlock.testsupport.RedisTestServer;
import io.lettuce.core.RedisClient;

/**
 * The calls Redlock makes to each node without a thread waiting for the answer
 * ({@link LettuceLockBackend#tryAcquireAsync}, {@link LettuceLockBackend#releaseAsync}):
 * the same answers as the blocking calls, on every path the blocking calls take (scripts
 * not cached, Redis 6.2), bounded by the same timeout, and a {@code null} answer, which
 * sends the caller to the blocking call, while there is no open connection to send on.
 */
class NonBlockingLockBackendTest {

    private RedisTestServer redis;

    private RedisClient client;

    private LettuceLockBackend backend;

    @AfterEach
    void close() {
        if (backend != null) {
            backend.close();
        }
        if (client != null) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        if (redis != null) {
            if (redis.isPaused()) {
                redis.resume();
            }
            redis.close();
        }
    }

    private LettuceLockBackend connect(RedisTestServer server, Duration timeout) {
        redis = server;
        return connect(server.redisUri(), timeout);
    }

    private LettuceLockBackend connect(String uri, Duration timeout) {
        client = RedisClient.create(uri);
        backend = new LettuceLockBackend(new LockConnection(() -> client, timeout), "lock:", "lock:released");
        return backend;
    }

    private static <T> T answer(CompletableFuture<T> future) throws Exception {
        assertThat(future).as("sent without blocking").isNotNull();
        return future.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aFreeLockIsTakenExcludesOthersAndIsReleasedOnlyByItsHolder() throws Exception {
        LettuceLockBackend node = connect(RedisTestServer.start(), Duration.ofSeconds(2));
        assertThat(node.awaitConnected(System.nanoTime() + TimeUnit.SECONDS.toNanos(10))).isTrue();
        LockKey key = node.lockKey("order:1");

        AcquireResult taken = answer(node.tryAcquireAsync(key, "holder", 30_000));
        AcquireResult refused = answer(node.tryAcquireAsync(key, "other", 30_000));

        assertThat(taken.acquired()).isTrue();
        assertThat(refused.acquired()).isFalse();
        assertThat(redis.get("lock:{order:1}")).isEqualTo("holder");
        assertThat(redis.pttl("lock:{order:1}")).isBetween(1L, 30_000L);
        assertThat(answer(node.releaseAsync(key, "other"))).isFalse();
        assertThat(redis.get("lock:{order:1}")).isEqualTo("holder");
        assertThat(answer(node.releaseAsync(key, "holder"))).isTrue();
        assertThat(redis.get("lock:{order:1}")).isNull();
    }

    @Test
    void anAcquireAskedAgainWithTheSameTokenIsStillOurs() throws Exception {
        // What a re-send after a reconnect looks like to Redis: the key already holds our
        // token.
        LettuceLockBackend node = connect(RedisTestServer.start(), Duration.ofSeconds(2));
        node.awaitConnected(System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
        LockKey key = node.lockKey("order:2");

        assertThat(answer(node.tryAcquireAsync(key, "holder", 30_000)).acquired()).isTrue();
        assertThat(answer(node.tryAcquireAsync(key, "holder", 30_000)).acquired()).isTrue();
    }

    @Test
    void aServerThatForgotItsScriptsIsSentTheirSource() throws Exception {
        LettuceLockBackend node = connect(RedisTestServer.start(), Duration.ofSeconds(2));
        node.awaitConnected(System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
        LockKey key = node.lockKey("order:3");
        assertThat(answer(node.tryAcquireAsync(key, "holder", 30_000)).acquired()).isTrue();
        redis.command("SCRIPT", "FLUSH");

        assertThat(answer(node.releaseAsync(key, "holder"))).isTrue();
        assertThat(redis.get("lock:{order:3}")).isNull();
    }

    @Test
    void onRedis62TheRefusedSetNxGetFallsBackToTheAcquireScript() throws Exception {
        LettuceLockBackend node = connect(RedisTestServer.builder().binary(RedisServerBinary.bundled()).start(),
                Duration.ofSeconds(2));
        assertThat(redis.infoValue("server", "redis_version")).startsWith("6.2");
        node.awaitConnected(System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
        LockKey first = node.lockKey("order:4");
        LockKey second = node.lockKey("order:5");

        assertThat(answer(node.tryAcquireAsync(first, "holder", 30_000)).acquired()).isTrue();
        assertThat(answer(node.tryAcquireAsync(first, "other", 30_000)).acquired()).isFalse();
        assertThat(answer(node.tryAcquireAsync(second, "holder", 30_000)).acquired()).isTrue();
        assertThat(redis.get("lock:{order:4}")).isEqualTo("holder");
        assertThat(redis.get("lock:{order:5}")).isEqualTo("holder");
    }

    @Test
    void aServerThatDoesNotAnswerFailsTheCallOnceTheTimeoutIsOverNamingTheProperty() throws Exception {
        LettuceLockBackend node = connect(RedisTestServer.start(), Duration.ofMillis(200));
        node.awaitConnected(System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
        redis.pause();

        CompletableFuture<AcquireResult> acquire = node.tryAcquireAsync(node.lockKey("order:6"), "holder", 30_000);

        assertThat(acquire).isNotNull();
        assertThatThrownBy(() -> acquire.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
            .cause()
            .isInstanceOf(LockBackendException.class)
            .hasMessageContaining("did not answer the acquire of lock")
            .hasMessageContaining("distributed-lock.operation-timeout=PT0.2S");
    }

    @Test
    void withoutAnOpenConnectionTheCallerIsSentToTheBlockingCall() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        LettuceLockBackend node = connect("redis://127.0.0.1:" + closedPort, Duration.ofMillis(500));
        LockKey key = node.lockKey("order:7");

        assertThat(node.tryAcquireAsync(key, "holder", 30_000)).isNull();
        assertThat(node.releaseAsync(key, "holder")).isNull();
        // The blocking call is the one that connects, and says why it could not.
        assertThatThrownBy(() -> node.tryAcquire(key, "holder", 30_000)).isInstanceOf(LockBackendException.class)
            .hasMessageContaining("connect");
    }

}
