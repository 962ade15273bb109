package io.github.distlock.sample.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * The paused holder of {@link PausedHolderDemo}: a second JVM with its own instance of
 * the sample application, so that the demo can stop it with {@code SIGSTOP} as a long GC
 * pause or a frozen VM would, without stopping itself.
 *
 * <p>
 * It obeys one command per line on standard input and answers on standard output with
 * lines that start with {@code @} (anything else on standard output is log output): <pre>
 * (started)                 -&gt; @READY
 * LOCK &lt;key&gt; &lt;ttl millis&gt;    -&gt; @LOCKED &lt;fencing token&gt;   (fixed lease: the watchdog is off)
 * WRITE &lt;plain|fenced&gt;       -&gt; @WROTE &lt;rows updated&gt;
 *                              &lt;whether the handle thinks it still holds the lock&gt;
 *                              &lt;milliseconds from asking for the lock to the write&gt;
 * EXIT                      -&gt; (exits)
 * </pre> The demo sends {@code WRITE} only after it resumed the process, so the
 * interleaving is the same on every run. The database comes from the environment:
 * {@code SAMPLE_JDBC_URL}, {@code SAMPLE_JDBC_USER}, {@code SAMPLE_JDBC_PASSWORD},
 * {@code SAMPLE_JDBC_TABLE} (not the command line, where other users of the machine could
 * read the password).
 */
public final class PausedHolderProcess {

    private PausedHolderProcess() {
    }

    /**
     * @param args the application instance's arguments; they name the Redis
     */
    public static void main(String[] args) throws IOException {
        HolderTable table = new HolderTable(System.getenv("SAMPLE_JDBC_URL"), System.getenv("SAMPLE_JDBC_USER"),
                System.getenv("SAMPLE_JDBC_PASSWORD"), System.getenv("SAMPLE_JDBC_TABLE"));
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (ConfigurableApplicationContext instance = DemoInstances.start("instance-a", Map.of(), args)) {
            LockService locks = instance.getBean(LockService.class);
            // A running service, not a cold JVM: the first acquisition also connects,
            // loads the scripts and runs
            // in the interpreter, and on a loaded machine that can outlast the demo's 1 s
            // lease, in which case the
            // library rightly gives the lock back instead of reporting a lease it no
            // longer has.
            locks
                .lock(LockRequest.of("paused-holder:warm-up")
                    .withTtl(Duration.ofSeconds(10))
                    .withWatchdog(false)
                    .withFencingToken())
                .release();
            answer("READY");
            LockHandle lock = null;
            long lockedAt = 0;
            for (String line = commands.readLine(); line != null; line = commands.readLine()) {
                String[] command = line.trim().split(" ");
                switch (command[0]) {
                    case "LOCK" -> {
                        // Watchdog off: a fixed lease that ends after the ttl. With the
                        // watchdog on the lease
                        // would end all the same, because SIGSTOP stops the watchdog's
                        // thread with the rest.
                        lockedAt = System.nanoTime();
                        lock = locks.lock(LockRequest.of(command[1])
                            .withTtl(Duration.ofMillis(Long.parseLong(command[2])))
                            .withWaitTime(Duration.ofSeconds(10))
                            .withWatchdog(false)
                            .withFencingToken());
                        answer("LOCKED " + lock.fencingToken());
                    }
                    case "WRITE" -> {
                        if (lock == null) {
                            throw new IllegalStateException("WRITE before LOCK");
                        }
                        boolean held = lock.isHeld();
                        // The bug under demonstration: the holder writes without asking
                        // whether its lease is
                        // still good (and asking would not be enough: the pause can fall
                        // between check and write).
                        int rows = table.write("instance-a", lock.fencingToken(), command[1].equals("fenced"));
                        lock.release();
                        lock = null;
                        answer("WROTE " + rows + " " + held + " " + (System.nanoTime() - lockedAt) / 1_000_000);
                    }
                    case "EXIT" -> {
                        return;
                    }
                    default -> throw new IllegalArgumentException("Unknown command: " + line);
                }
            }
        }
        catch (RuntimeException e) {
            answer("FAILED " + e);
            throw e;
        }
    }

    private static void answer(String line) {
        System.out.println("@" + line);
        System.out.flush();
        if (System.out.checkError()) {
            throw new UncheckedIOException(new IOException("The demo stopped listening"));
        }
    }

}
