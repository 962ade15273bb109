package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a started server offers: port, configuration, and the admin commands tests rely
 * on.
 */
class RedisTestServerTest {

    private static RedisTestServer redis;

    @BeforeAll
    static void startServer() {
        redis = RedisTestServer.start();
    }

    @AfterAll
    static void closeServer() {
        redis.close();
    }

    @BeforeEach
    void isolate() {
        redis.flushAll();
    }

    @Test
    void startsOnAFreeLoopbackPortOtherThanTheSharedRedisAndAnswersPing() {
        assertThat(redis.port()).isPositive().isNotEqualTo(6379);
        assertThat(redis.host()).isEqualTo("127.0.0.1");
        assertThat(redis.redisUri()).isEqualTo("redis://127.0.0.1:" + redis.port());
        assertThat(redis.ping()).isEqualTo("PONG");
        // It really is our process answering, not some other server on that port.
        assertThat(redis.infoValue("server", "process_id")).isEqualTo(Long.toString(redis.pid()));
        assertThat(redis.infoValue("server", "tcp_port")).isEqualTo(Integer.toString(redis.port()));
    }

    @Test
    void setThenGetReturnsTheStoredValueAndPttlReportsTheLease() {
        assertThat(redis.command("SET", "lock:order-1", "owner-a", "PX", "30000", "NX")).isEqualTo("OK");
        assertThat(redis.command("SET", "lock:order-1", "owner-b", "PX", "30000", "NX")).isNull();

        assertThat(redis.get("lock:order-1")).isEqualTo("owner-a");
        assertThat(redis.pttl("lock:order-1")).isBetween(1L, 30_000L);
        assertThat(redis.dbSize()).isEqualTo(1);
        assertThat(redis.del("lock:order-1", "absent")).isEqualTo(1);
        assertThat(redis.get("lock:order-1")).isNull();
        assertThat(redis.pttl("lock:order-1")).isEqualTo(-2);
    }

    @Test
    void parsesArrayAndUnicodeReplies() {
        redis.set("grüße", "日本");
        redis.command("RPUSH", "list", "a", "b");

        assertThat(redis.get("grüße")).isEqualTo("日本");
        assertThat(redis.command("LRANGE", "list", "0", "-1")).isEqualTo(List.of("a", "b"));
        assertThat(redis.command("MGET", "list-missing", "grüße")).isEqualTo(Arrays.asList(null, "日本"));
        assertThat(redis.command("EVAL", "return {1, 'x', {2}}", "0")).isEqualTo(List.of(1L, "x", List.of(2L)));
    }

    @Test
    void errorRepliesAreThrownWithTheirErrorCode() {
        redis.command("RPUSH", "list", "a");

        assertThatThrownBy(() -> redis.get("list")).isInstanceOf(RedisErrorReplyException.class)
            .hasMessageStartingWith("WRONGTYPE")
            .extracting(e -> ((RedisErrorReplyException) e).errorCode())
            .isEqualTo("WRONGTYPE");
        assertThatThrownBy(() -> redis.command("EVALSHA", "0000000000000000000000000000000000000000", "0"))
            .isInstanceOf(RedisErrorReplyException.class)
            .extracting(e -> ((RedisErrorReplyException) e).errorCode())
            .isEqualTo("NOSCRIPT");
    }

    @Test
    void aServerWithAPasswordRefusesClientsWithoutItWhileTheFixtureAuthenticates() throws Exception {
        try (RedisTestServer locked = RedisTestServer.builder().password("s3cret").start()) {
            assertThat(locked.ping()).isEqualTo("PONG");
            locked.set("k", "v");
            assertThat(locked.get("k")).isEqualTo("v");
            try (RespConnection stranger = RespConnection.open(locked.host(), locked.port(), Duration.ofSeconds(5))) {
                assertThatThrownBy(() -> stranger.command("GET", "k")).isInstanceOf(RedisErrorReplyException.class)
                    .hasMessageStartingWith("NOAUTH");
                assertThatThrownBy(() -> stranger.command("AUTH", "wrong")).isInstanceOf(RedisErrorReplyException.class)
                    .hasMessageStartingWith("WRONGPASS");
            }
        }
        assertThatThrownBy(() -> RedisTestServer.builder().password(" ")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void persistenceIsOffAndTheServerWorksInItsOwnDirectory() throws Exception {
        assertThat(redis.command("CONFIG", "GET", "save")).isEqualTo(List.of("save", ""));
        assertThat(redis.command("CONFIG", "GET", "appendonly")).isEqualTo(List.of("appendonly", "no"));
        assertThat(redis.command("CONFIG", "GET", "bind")).asList().element(1).asString().contains("127.0.0.1");
        Path dir = Path.of((String) ((List<?>) redis.command("CONFIG", "GET", "dir")).get(1));
        assertThat(dir.toRealPath()).isEqualTo(redis.directory().toRealPath());
        assertThat(redis.logFile()).exists();
        assertThat(redis.logTail(50)).contains("Ready to accept connections");
    }

    @Test
    void commandCallsCountOnlyWhatRanSinceTheStatsWereReset() {
        redis.set("a", "1");
        redis.resetStats();
        redis.set("a", "2");
        redis.set("a", "3");
        redis.get("a");

        assertThat(redis.commandCalls("SET")).isEqualTo(2);
        assertThat(redis.commandCalls("get")).isEqualTo(1);
        assertThat(redis.commandCalls("evalsha")).isZero();
    }

    @Test
    void scriptCallsCountEvalAndEvalshaAlike() {
        redis.resetStats();
        redis.command("EVAL", "return 1", "0");
        redis.command("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0");
        redis.get("a");

        assertThat(redis.scriptCalls()).isEqualTo(2);
    }

    @Test
    void subscriberCountAndClientListSeeALongLivedConnection() throws Exception {
        long clientsBefore = redis.connectedClients();
        try (RespConnection subscriber = redis.openConnection()) {
            subscriber.send("SUBSCRIBE", "lock-released");
            assertThat(subscriber.readReply()).isEqualTo(List.of("subscribe", "lock-released", 1L));

            assertThat(redis.subscriberCount("lock-released")).isEqualTo(1);
            assertThat(redis.connectedClients()).isEqualTo(clientsBefore + 1);
            assertThat(redis.clientList()).anySatisfy(line -> assertThat(line).contains("cmd=subscribe"));

            redis.command("PUBLISH", "lock-released", "lock:order-1");
            assertThat(subscriber.readReply()).isEqualTo(List.of("message", "lock-released", "lock:order-1"));
        }
    }

    @Test
    void extraArgumentsReachTheServerConfiguration() {
        try (RedisTestServer configured = RedisTestServer.builder()
            .args("--maxmemory", "12mb", "--notify-keyspace-events", "Ex")
            .start()) {
            assertThat(configured.command("CONFIG", "GET", "maxmemory")).isEqualTo(List.of("maxmemory", "12582912"));
            assertThat(configured.command("CONFIG", "GET", "notify-keyspace-events")).asList()
                .element(1)
                .asString()
                .contains("x")
                .contains("E");
        }
    }

    @Test
    void optionsOwnedByTheFixtureAreRejected() {
        assertThatThrownBy(() -> RedisTestServer.builder().args("--port", "6379"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("--port");
    }

    @Test
    void startupFailureReportsTheServerOutputAndCleansUp() {
        int liveBefore = LiveRedisProcesses.count();

        assertThatThrownBy(() -> RedisTestServer.builder().args("--no-such-directive", "1").start())
            .isInstanceOf(RedisStartupException.class)
            .hasMessageContaining("exited with code")
            .hasMessageContaining("no-such-directive");
        assertThat(LiveRedisProcesses.count()).isEqualTo(liveBefore);
    }

    @Test
    void bundledBinaryStartsWhenChosenExplicitly() {
        Path bundled = RedisServerBinary.bundled();
        assertThat(bundled).isExecutable();
        try (RedisTestServer old = RedisTestServer.builder().binary(bundled).start()) {
            old.set("k", "v");
            assertThat(old.get("k")).isEqualTo("v");
            assertThat(old.infoValue("server", "redis_version")).startsWith("6.2.");
            assertThat(old.command("CONFIG", "GET", "save")).isEqualTo(List.of("save", ""));
        }
    }

    @Test
    void resolvedBinaryIsAnExecutableFileAndStaysTheSame() {
        assertThat(RedisServerBinary.resolve()).isRegularFile().isExecutable();
        assertThat(RedisServerBinary.resolve()).isSameAs(RedisServerBinary.resolve());
    }

}
