package io.github.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.zookeeper.ZooKeeperTestEnsemble;

/**
 * A holder in another JVM is stopped ({@code SIGSTOP}) past its session, as a long GC
 * pause or a frozen VM would stop it; another client gets the lock meanwhile; the first
 * is resumed. Checked: the ensemble gave the lock away only once the paused holder's
 * session was over, the resumed holder is told it lost the lock and no longer believes it
 * holds it, and the write it still attempts carries a smaller fencing token than the new
 * holder's, so a resource that checks tokens refuses it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ZooKeeperPausedClientTest {

    private static final Duration SESSION = Duration.ofSeconds(4);

    private static final Duration PATIENCE = Duration.ofSeconds(90);

    private ZooKeeperTestEnsemble ensemble;

    @BeforeAll
    void startEnsemble() {
        ensemble = ZooKeeperTestEnsemble.start();
    }

    @AfterAll
    void stopEnsemble() {
        if (ensemble != null) {
            ensemble.close();
        }
    }

    @Test
    void aHolderPausedPastItsSessionIsToldItLostTheLockAndItsLateWriteCarriesTheSmallerToken() throws Exception {
        String name = "paused-holder";
        Holder holder = Holder.start(ensemble.connectString(), name);
        try (ZooKeeperFaultTest.Instance other = new ZooKeeperFaultTest.Instance(
                ZooKeeperLockSettings.of(ensemble.connectString()).withSessionTimeout(SESSION))) {
            long pausedToken = Long.parseLong(holder.expect("HELD "));
            // The resource: it takes a write only with a token above every one it has
            // seen.
            long[] highestSeen = { pausedToken };

            holder.signal("STOP");
            LockHandle next = await().atMost(PATIENCE)
                .until(() -> other.service
                    .tryLock(LockRequest.of(name).withTtl(SESSION).withWaitTime(Duration.ZERO).withFencingToken())
                    .orElse(null), handle -> handle != null);
            long nextToken = next.fencingToken();
            boolean nextWrote = nextToken > highestSeen[0];
            highestSeen[0] = Math.max(highestSeen[0], nextToken);
            holder.signal("CONT");
            holder.send("WRITE");
            String[] state = holder.expect("STATE ").split(" ");
            long lateToken = Long.parseLong(state[2].substring("token=".length()));
            boolean lateWrote = lateToken > highestSeen[0];

            assertThat(nextWrote).as("the new holder's write").isTrue();
            assertThat(nextToken).isGreaterThan(pausedToken);
            assertThat(state[0]).as("the resumed holder no longer believes it holds the lock").isEqualTo("held=false");
            assertThat(lateToken).as("its late write carries its own, smaller token").isEqualTo(pausedToken);
            assertThat(lateWrote).as("the resource refuses the late write").isFalse();
            assertThat(holder.expect("LOST ")).as("the resumed holder is told").isNotBlank();
            assertThat(next.isHeld()).isTrue();
            assertThat(next.release()).isTrue();
        }
        finally {
            holder.close();
        }
    }

    /** The holder's JVM, driven over its standard input and output. */
    static final class Holder implements AutoCloseable {

        private final Process process;

        private final Writer input;

        /** Every line the holder printed, in order. */
        private final List<String> printed = new CopyOnWriteArrayList<>();

        private Holder(Process process) {
            this.process = process;
            this.input = process.outputWriter(StandardCharsets.UTF_8);
            Thread reader = new Thread(() -> {
                try (BufferedReader out = new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line = out.readLine(); line != null; line = out.readLine()) {
                        printed.add(line);
                    }
                }
                catch (IOException ex) {
                    // The process ended.
                }
            }, "paused-holder-output");
            reader.setDaemon(true);
            reader.start();
        }

        static Holder start(String connectString, String name) throws IOException {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process process = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
                    System.getProperty("java.class.path"), Main.class.getName(), connectString, name,
                    Long.toString(SESSION.toMillis()))
                .redirectErrorStream(true)
                .start();
            return new Holder(process);
        }

        /**
         * The rest of the first output line that starts with {@code prefix}, whenever it
         * was printed: other lines are kept for later, as the holder may be told of its
         * loss before it answers a command.
         */
        String expect(String prefix) throws InterruptedException {
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            while (true) {
                for (String line : printed) {
                    if (line.startsWith(prefix)) {
                        return line.substring(prefix.length());
                    }
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError(
                            "The holder printed no '" + prefix + "' line; it printed:\n" + String.join("\n", printed));
                }
                Thread.sleep(50);
            }
        }

        void send(String command) throws IOException {
            input.write(command + "\n");
            input.flush();
        }

        void signal(String signal) throws Exception {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
            assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0).as("kill -%s", signal).isTrue();
        }

        @Override
        public void close() {
            if (process.isAlive()) {
                try {
                    signal("CONT");
                }
                catch (Exception ex) {
                    // Killed below all the same.
                }
                process.destroyForcibly();
            }
        }

    }

    /**
     * The holder: takes the lock with a fencing token and the watchdog on, prints
     * {@code HELD <token>}, {@code LOST <reason>} when told, and on {@code WRITE} what it
     * would write with: {@code STATE held=<belief> lost=<told> token=<token>}.
     */
    public static final class Main {

        private Main() {
        }

        public static void main(String[] args) throws Exception {
            PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
            Duration session = Duration.ofMillis(Long.parseLong(args[2]));
            try (ZooKeeperFaultTest.Instance instance = new ZooKeeperFaultTest.Instance(
                    ZooKeeperLockSettings.of(args[0]).withSessionTimeout(session))) {
                LockHandle held = instance.service
                    .lock(LockRequest.of(args[1]).withTtl(session).withWaitTime(Duration.ZERO).withFencingToken());
                held.onLost(handle -> out.println("LOST " + String.join(",", instance.lost) + " handle"));
                out.println("HELD " + held.fencingToken());
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    if (line.equals("WRITE")) {
                        out.println("STATE held=" + held.isHeld() + " lost=" + held.isLost() + " token="
                                + held.fencingToken());
                    }
                }
            }
        }

    }

}
