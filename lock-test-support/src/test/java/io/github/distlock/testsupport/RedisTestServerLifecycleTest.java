package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Fault injection and cleanup: pause, resume, kill, stop, restart, close, and the
 * shutdown hook.
 */
class RedisTestServerLifecycleTest {

    private static final Duration SHORT = Duration.ofMillis(300);

    private RedisTestServer redis;

    @BeforeEach
    void startServer() {
        redis = RedisTestServer.start();
    }

    @AfterEach
    void closeServer() {
        redis.close();
    }

    @Test
    void pauseMakesCommandsTimeOutWhileTheProcessStaysAlive() {
        redis.pause();

        assertThat(redis.isPaused()).isTrue();
        assertThat(redis.isRunning()).isTrue();
        assertThat(ProcessHandle.of(redis.pid())).get().matches(ProcessHandle::isAlive);
        assertThatThrownBy(() -> redis.command(SHORT, "PING")).isInstanceOf(UncheckedIOException.class)
            .hasCauseInstanceOf(SocketTimeoutException.class);
    }

    @Test
    void resumeMakesAPausedServerAnswerAgainAndRunWhatQueuedUpOnOpenConnections() throws Exception {
        try (RespConnection open = RespConnection.open(redis.host(), redis.port(), SHORT)) {
            redis.pause();
            open.send("SET", "written-while-paused", "yes");
            assertThatThrownBy(open::readReply).isInstanceOf(SocketTimeoutException.class);

            redis.resume();

            assertThat(redis.isPaused()).isFalse();
            // The connection reads with the short timeout; a busy machine may take longer
            // to answer after the resume.
            Object queued = await().atMost(Duration.ofSeconds(20))
                .ignoreExceptionsInstanceOf(SocketTimeoutException.class)
                .until(open::readReply, reply -> true);
            assertThat(queued).as("the connection stayed open through the pause").isEqualTo("OK");
            assertThat(redis.ping()).isEqualTo("PONG");
            assertThat(redis.get("written-while-paused")).isEqualTo("yes");
        }
    }

    @Test
    void killMakesTheServerNotRunningAndConnectionsFail() throws Exception {
        long pid = redis.pid();
        try (RespConnection open = redis.openConnection()) {
            redis.kill();

            assertThat(redis.isRunning()).isFalse();
            assertThat(ProcessHandle.of(pid)).isEmpty();
            assertThatThrownBy(() -> open.command("PING")).isInstanceOf(IOException.class);
            assertThatThrownBy(redis::ping).isInstanceOf(UncheckedIOException.class)
                .hasCauseInstanceOf(ConnectException.class);
        }
    }

    @Test
    void killOfAPausedServerEndsIt() {
        redis.pause();

        redis.kill();

        assertThat(redis.isRunning()).isFalse();
        assertThat(redis.isPaused()).isFalse();
    }

    @Test
    void stopShutsTheServerDownAndLeavesNoProcess() {
        long pid = redis.pid();

        redis.stop();

        assertThat(redis.isRunning()).isFalse();
        assertThat(ProcessHandle.of(pid)).isEmpty();
        assertThat(redis.logTail(20)).contains("ready to exit");
    }

    @Test
    void restartAfterKillUsesTheSamePortAndStartsEmpty() {
        int port = redis.port();
        long firstPid = redis.pid();
        redis.set("lock:order-1", "owner-a");

        redis.kill();
        redis.restart();

        assertThat(redis.isRunning()).isTrue();
        assertThat(redis.port()).isEqualTo(port);
        assertThat(redis.pid()).isNotEqualTo(firstPid);
        assertThat(redis.ping()).isEqualTo("PONG");
        assertThat(redis.get("lock:order-1")).as("persistence is off").isNull();
        assertThat(redis.dbSize()).isZero();
    }

    @Test
    void restartStartsEmptyEvenWhenASnapshotWasLeftInTheDirectory() {
        // A replica's full sync leaves such a dump.rdb behind; SAVE is the direct way to
        // write one.
        redis.set("lock:order-1", "owner-a");
        redis.command("SAVE");

        redis.kill();
        redis.restart();

        assertThat(redis.dbSize()).isZero();
    }

    @Test
    void restartOfARunningServerReplacesTheProcessOnTheSamePort() {
        int port = redis.port();
        long firstPid = redis.pid();

        redis.restart();

        assertThat(redis.port()).isEqualTo(port);
        assertThat(ProcessHandle.of(firstPid)).isEmpty();
        assertThat(redis.infoValue("server", "process_id")).isEqualTo(Long.toString(redis.pid()));
    }

    @Test
    void closeIsIdempotentAndLeavesNoProcessOrDirectory() {
        long pid = redis.pid();
        Path directory = redis.directory();

        redis.close();
        redis.close();

        assertThat(redis.isRunning()).isFalse();
        assertThat(ProcessHandle.of(pid)).isEmpty();
        assertThat(directory).doesNotExist();
        assertThatThrownBy(redis::restart).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void closeEndsAPausedServer() {
        long pid = redis.pid();
        redis.pause();

        redis.close();

        assertThat(ProcessHandle.of(pid)).isEmpty();
    }

    @Test
    void pauseOfAStoppedServerIsRejected() {
        redis.stop();

        assertThatThrownBy(redis::pause).isInstanceOf(IllegalStateException.class).hasMessageContaining("not running");
    }

    @Test
    void shutdownHookKillsServersThatWereNeverClosed() throws Exception {
        Process jvm = new ProcessBuilder(javaCommand(ForgottenServerMain.class)).redirectErrorStream(true).start();
        List<String> output = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(jvm.getInputStream(), StandardCharsets.UTF_8))) {
            reader.lines().forEach(output::add);
        }
        assertThat(jvm.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(jvm.exitValue()).as("child JVM output: %s", output).isZero();
        long pid = output.stream()
            .filter(line -> line.startsWith(ForgottenServerMain.PID_PREFIX))
            .map(line -> Long.parseLong(line.substring(ForgottenServerMain.PID_PREFIX.length())))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no pid printed: " + output));

        await().atMost(Duration.ofSeconds(20))
            .until(() -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), alive -> !alive);
        assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEqualTo(Optional.empty());
    }

    private static List<String> javaCommand(Class<?> mainClass) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // Surefire may run tests from a manifest-only jar; its manifest Class-Path makes
        // that jar work as -cp too.
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        return List.of(java, "-cp", classPath, mainClass.getName());
    }

}
