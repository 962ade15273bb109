package io.github.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockHandle;
import io.github.distlock.testsupport.EtcdTestCluster;

/**
 * A client JVM ({@link PausableHolder}) frozen with SIGSTOP past its lease, as a long GC
 * pause would, then resumed: meanwhile another client got the lock; the frozen one is
 * told it lost it, and its late write carries the smaller fencing token, which the
 * resource (a register that keeps writes with rising tokens only) refuses.
 */
class EtcdPausedClientTest {

    private EtcdTestCluster etcd;

    private Process holder;

    @BeforeEach
    void startCluster() {
        etcd = EtcdTestCluster.start();
    }

    @AfterEach
    void stopEverything() {
        if (holder != null) {
            signal(holder.pid(), "CONT");
            holder.destroyForcibly();
        }
        etcd.close();
    }

    @Test
    void aClientPausedPastItsLeaseIsToldItLostTheLockAndItsLateWriteCarriesTheSmallerToken() throws Exception {
        FencedRegister account = new FencedRegister();
        holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), PausableHolder.class.getName(),
                String.join(",", etcd.endpoints()), "account", "3000")
            .redirectErrorStream(true)
            .start();
        BlockingQueue<String> said = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(
                    new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    if (line.startsWith("holder: ")) {
                        said.add(line.substring("holder: ".length()));
                    }
                }
            }
            catch (java.io.IOException ended) {
                // The process ended.
            }
        });
        reader.setDaemon(true);
        reader.start();
        Writer commands = new OutputStreamWriter(holder.getOutputStream(), StandardCharsets.UTF_8);

        String held = said.poll(60, TimeUnit.SECONDS);
        assertThat(held).as("the holder's first line").startsWith("HELD ");
        long pausedToken = Long.parseLong(held.substring("HELD ".length()));
        assertThat(account.write(pausedToken)).as("the holder's write before its pause").isTrue();

        signal(holder.pid(), "STOP");
        try (EtcdFaultTest.Client other = new EtcdFaultTest.Client(
                EtcdLockBackend.connect(EtcdSettings.of(etcd.endpoints())))) {
            LockHandle next = other.locks.lock("account", Duration.ofSeconds(30), Duration.ofSeconds(30));
            long nextToken = next.fencingToken();
            assertThat(nextToken).as("the next holder's token").isGreaterThan(pausedToken);
            assertThat(account.write(nextToken)).isTrue();

            signal(holder.pid(), "CONT");
            assertThat(said.poll(30, TimeUnit.SECONDS)).as("the resumed holder is told")
                .isEqualTo("LOST " + pausedToken);
            commands.write("write\n");
            commands.flush();
            String late = said.poll(30, TimeUnit.SECONDS);
            assertThat(late).as("the late write, and whether its handle says held")
                .isEqualTo("WRITE " + pausedToken + " false");
            assertThat(account.write(pausedToken)).as("the late write with the smaller token").isFalse();
            assertThat(account.lastToken()).isEqualTo(nextToken);
            assertThat(next.isHeld()).isTrue();
            assertThat(next.release()).isTrue();
        }
        commands.write("exit\n");
        commands.flush();
        assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }

    private static void signal(long pid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
            kill.waitFor(10, TimeUnit.SECONDS);
        }
        catch (java.io.IOException ex) {
            throw new IllegalStateException("could not send SIG" + signal + " to " + pid, ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The protected resource: keeps a write only if its token is above every earlier one.
     */
    static final class FencedRegister {

        private final AtomicLong last = new AtomicLong();

        boolean write(long token) {
            long seen;
            do {
                seen = last.get();
                if (token <= seen) {
                    return false;
                }
            }
            while (!last.compareAndSet(seen, token));
            return true;
        }

        long lastToken() {
            return last.get();
        }

    }

}
