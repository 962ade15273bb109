package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

/**
 * {@link RedisTestServer.Builder#withFakeClock()}: a real redis-server under libfaketime
 * whose wall clock a test steps while it runs. The comparisons with the JVM's clock allow
 * a second of slack for a loaded machine; the jumps are a minute or more, so a server
 * that ignored them fails by far.
 */
class FakeClockTest {

    private RedisTestServer redis;

    @BeforeEach
    void startUnderTheFakeClock() {
        redis = RedisTestServer.builder().withFakeClock().start();
    }

    @AfterEach
    void close() {
        // Null when the start was skipped for a missing libfaketime: the skip must stay a
        // skip.
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void theServerStartsAtRealTime() {
        assertThat(redis.clockOffset()).isZero();
        assertThat(serverClockAheadMillis()).isCloseTo(0L, within(1_000L));
    }

    @Test
    void aForwardJumpExpiresAKeyLongBeforeItsTtlHasPassedInRealTime() {
        redis.command("SET", "lock:{a}", "token", "PX", "60000");

        redis.jumpClock(Duration.ofSeconds(61));

        assertThat(redis.get("lock:{a}")).isNull();
        assertThat(redis.pttl("lock:{a}")).isEqualTo(-2L);
    }

    @Test
    void aBackwardJumpMakesAKeyOutliveItsTtl() {
        redis.command("SET", "lock:{a}", "token", "PX", "2000");

        redis.jumpClock(Duration.ofSeconds(-60));

        // The deadline stayed where it was on the server's clock, which now has 62 s to
        // go to reach it.
        assertThat(redis.pttl("lock:{a}")).isGreaterThan(60_000L);
        assertThat(redis.get("lock:{a}")).isEqualTo("token");
    }

    @Test
    void timersKeepRunningAfterABackwardJumpBecauseTheMonotonicClockIsLeftReal() {
        redis.jumpClock(Duration.ofHours(-1));
        redis.command("SET", "lock:{a}", "token", "PX", "100");

        // Nobody reads the key, so only serverCron's active expiry can remove it: its
        // timer runs on the monotonic
        // clock, which a faked monotonic jump of an hour back would have stalled for an
        // hour.
        await().atMost(Duration.ofSeconds(10)).until(() -> redis.dbSize() == 0);
    }

    @Test
    void timeAndUptimeFollowTheJump() {
        long uptimeBefore = Long.parseLong(redis.infoValue("server", "uptime_in_seconds"));

        Duration offset = redis.jumpClock(Duration.ofHours(1));

        assertThat(offset).isEqualTo(Duration.ofHours(1));
        assertThat(serverClockAheadMillis()).isCloseTo(3_600_000L, within(1_000L));
        // Uptime is wall-clock time since start: a restart guard that trusts it sees an
        // old node.
        assertThat(Long.parseLong(redis.infoValue("server", "uptime_in_seconds")))
            .isGreaterThanOrEqualTo(uptimeBefore + 3_600);
    }

    @Test
    void jumpsAddUpAndCanBeFractional() {
        redis.jumpClock(Duration.ofSeconds(100));
        redis.jumpClock(Duration.ofMillis(-40_500));

        assertThat(redis.clockOffset()).isEqualTo(Duration.ofMillis(59_500));
        assertThat(serverClockAheadMillis()).isCloseTo(59_500L, within(1_000L));
    }

    @Test
    void theOffsetSurvivesARestartAsAStepWouldOnTheHost() {
        redis.jumpClock(Duration.ofMinutes(5));
        long pidBefore = redis.pid();

        redis.restart();

        assertThat(redis.pid()).isNotEqualTo(pidBefore);
        assertThat(serverClockAheadMillis()).isCloseTo(300_000L, within(1_000L));
    }

    @Test
    void otherServersKeepTheRealClock() {
        try (RedisTestServer plain = RedisTestServer.start()) {
            redis.jumpClock(Duration.ofMinutes(10));

            assertThat(aheadMillis(plain)).isCloseTo(0L, within(1_000L));
            assertThatThrownBy(() -> plain.jumpClock(Duration.ofSeconds(1))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(
                        "jumpClock() needs a server started with RedisTestServer.builder()" + ".withFakeClock()")
                .hasMessageContaining(plain.toString());
        }
    }

    @Test
    void theOffsetIsWrittenInLibfaketimesRelativeForm() {
        assertThat(FakeClock.format(Duration.ofMillis(-1_250))).isEqualTo("-1.250000");
        assertThat(FakeClock.format(Duration.ofSeconds(61))).isEqualTo("+61.000000");
        assertThat(FakeClock.format(Duration.ZERO)).isEqualTo("+0.000000");
    }

    @Test
    void aMissingLibrarySkipsOutsideCiAndFailsOnCi() {
        String before = System.getProperty(FakeClock.LIBRARY_PROPERTY);
        System.setProperty(FakeClock.LIBRARY_PROPERTY, "/nonexistent/libfaketime.so.1");
        try {
            boolean onCi = "true".equalsIgnoreCase(System.getenv("CI"));
            assertThatThrownBy(() -> RedisTestServer.builder().withFakeClock().start())
                .isInstanceOf(onCi ? IllegalStateException.class : TestAbortedException.class)
                .hasMessageContaining("needs libfaketime")
                .hasMessageContaining("/nonexistent/libfaketime.so.1")
                .hasMessageContaining("apt-get install faketime libfaketime");
        }
        finally {
            if (before == null) {
                System.clearProperty(FakeClock.LIBRARY_PROPERTY);
            }
            else {
                System.setProperty(FakeClock.LIBRARY_PROPERTY, before);
            }
        }
    }

    /**
     * A server that runs without libfaketime, as a statically linked one does (it ignores
     * {@code LD_PRELOAD}). Such a server is made here by a wrapper that drops
     * {@code LD_PRELOAD} and execs the real one, rather than with the i386 static build
     * embedded-redis bundles: a kernel without 32-bit emulation (a Firecracker VM, for
     * one) cannot run that at all.
     */
    @Test
    void aServerThatDoesNotLoadTheFakeClockFailsToStartSayingWhy(@TempDir Path directory) throws IOException {
        Path wrapper = directory.resolve("redis-server-without-preload");
        Files.writeString(wrapper, "#!/bin/sh\nunset LD_PRELOAD\nexec '" + RedisServerBinary.resolve() + "' \"$@\"\n");
        assertThat(wrapper.toFile().setExecutable(true)).isTrue();

        assertThatThrownBy(() -> RedisTestServer.builder().binary(wrapper).withFakeClock().start())
            .isInstanceOf(RedisStartupException.class)
            .hasMessageContaining(wrapper.toString())
            .hasMessageContaining("did not load")
            .hasMessageContaining("a statically linked redis-server ignores LD_PRELOAD");
    }

    private long serverClockAheadMillis() {
        return aheadMillis(redis);
    }

    /**
     * The server's {@code TIME} minus the JVM's wall clock, read right after the reply.
     */
    private static long aheadMillis(RedisTestServer server) {
        List<?> time = (List<?>) server.command("TIME");
        long serverMillis = Long.parseLong((String) time.get(0)) * 1_000 + Long.parseLong((String) time.get(1)) / 1_000;
        return serverMillis - System.currentTimeMillis();
    }

}
