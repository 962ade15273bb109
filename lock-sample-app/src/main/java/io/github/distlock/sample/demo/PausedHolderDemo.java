package io.github.distlock.sample.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;

import org.h2.tools.Server;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.core.env.StandardEnvironment;

/**
 * A holder paused past its lease. Instance A, a second JVM ({@link PausedHolderProcess}),
 * takes the lock with a 1 s lease and is stopped with {@code SIGSTOP}, as a long GC pause
 * or a frozen VM would stop it. Its lease runs out, instance B (this JVM) takes the lock
 * and writes the row, and A is resumed with {@code SIGCONT} and writes the row too,
 * believing it still holds the lock. No lock algorithm can prevent this; the protected
 * resource can, by rejecting writes whose fencing token is older than the last one it
 * saw: {@code UPDATE ... WHERE fence < :token}. The demo runs it without and with that
 * check.
 *
 * <p>
 * The database is an in-memory H2 (its TCP server, so that both JVMs reach it), or the
 * one {@code spring.datasource.url} (with {@code .username} and {@code .password}) names,
 * for example a PostgreSQL. The demo creates a table of its own there and drops it at the
 * end.
 */
public final class PausedHolderDemo {

    /** The demo's name for {@code --demo=<name>}. */
    public static final String NAME = "paused-holder";

    /** Instance A's lease. */
    static final Duration HOLDER_TTL = Duration.ofSeconds(1);

    private static final String KEY = "paused-holder:account-1";

    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(120);

    private PausedHolderDemo() {
    }

    /**
     * One mode's outcome.
     *
     * @param fenced whether the writes carried the database-side fencing check
     * @param tokenA the fencing token of the paused holder
     * @param paused how long A was stopped (SIGSTOP to SIGCONT)
     * @param lockToWrite A's own clock from asking for the lock to writing: longer than
     * its lease, since B could only take the lock once that lease had run out
     * @param tokenB the fencing token of the holder that took over
     * @param rowsB rows B's write updated
     * @param rowsA rows A's write updated after it woke up
     * @param heldA whether A's handle still claimed the lock when A woke up
     * @param finalHolder who the row says wrote it last
     */
    public record Row(boolean fenced, long tokenA, Duration paused, Duration lockToWrite, long tokenB, int rowsB,
            int rowsA, boolean heldA, String finalHolder) {

        /** Whether the paused holder's stale write overwrote B's. */
        public boolean staleWriteLanded() {
            return rowsA > 0;
        }
    }

    /**
     * Both modes.
     *
     * @param database what the demo wrote to, for the header
     * @param pid instance A's process id
     * @param plain without fencing
     * @param fenced with the fencing check
     */
    public record Report(String database, long pid, Row plain, Row fenced) {

        /** The rows as a table. */
        public DemoTable table() {
            DemoTable table = new DemoTable().left("fencing check")
                .right("A's token")
                .right("A stopped")
                .right("A: lock to write")
                .right("B's token")
                .left("B's write")
                .left("A's write after SIGCONT")
                .left("row's last writer")
                .left("stale write");
            for (Row row : List.of(plain, fenced)) {
                table.row(row.fenced() ? "WHERE fence < :token" : "none", row.tokenA(), row.paused().toMillis() + " ms",
                        row.lockToWrite().toMillis() + " ms", row.tokenB(), rows(row.rowsB()), rows(row.rowsA()),
                        row.finalHolder(), row.staleWriteLanded() ? "LANDED" : "rejected");
            }
            return table;
        }

        private static String rows(int rows) {
            return rows + (rows == 1 ? " row" : " rows");
        }
    }

    /** Runs the demo as a command; see {@link DemoCommand}. */
    static int runCommand(PrintStream out, StandardEnvironment given, String[] instanceArgs) {
        String url = given.getProperty("spring.datasource.url");
        out.printf("Instance A, a second JVM, takes the lock '%s' with a %d ms lease and the watchdog off (with "
                + "it on, the lease would run out all the same: SIGSTOP stops the watchdog too), and is stopped "
                + "with SIGSTOP. When its lease has run out, instance B takes the lock and writes the row; then A "
                + "gets SIGCONT and writes it too. Database: %s.%n%n", KEY, HOLDER_TTL.toMillis(),
                url == null ? "in-memory H2 (pass --spring.datasource.url/username/password for another)" : url);
        Report report = run(url, given.getProperty("spring.datasource.username", ""),
                given.getProperty("spring.datasource.password", ""), instanceArgs);
        out.print(report.table());
        out.println("\nTokens are max(counter + 1, Redis TIME in microseconds), so they look like timestamps; what "
                + "counts is that each holder's is larger than every earlier holder's.");
        if (!report.plain().staleWriteLanded() || report.fenced().staleWriteLanded()) {
            out.println("\nVerdict: unexpected: the stale write should land without the fencing check and be "
                    + "rejected with it.");
            return 1;
        }
        out.printf(
                "%nVerdict: without fencing the paused holder's stale write (token %d) overwrote B's (token %d); "
                        + "with the database checking the token it was rejected and B's write stands.%n",
                report.plain().tokenA(), report.plain().tokenB());
        return 0;
    }

    /**
     * Runs both modes against the given database, or an in-memory H2 when {@code url} is
     * {@code null}.
     * @param url a JDBC URL, or {@code null}
     * @param user the database user (ignored for H2)
     * @param password the user's password (ignored for H2)
     * @param args arguments for both instances; they must name the Redis
     */
    public static Report run(String url, String user, String password, String... args) {
        String tableName = "paused_holder_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        Server h2 = null;
        try {
            String database;
            HolderTable table;
            if (url == null) {
                h2 = startH2();
                table = new HolderTable(
                        "jdbc:h2:tcp://127.0.0.1:" + h2.getPort() + "/mem:paused_holder;DB_CLOSE_DELAY=-1", "sa", "",
                        tableName);
                database = "H2 in memory, TCP port " + h2.getPort();
            }
            else {
                table = new HolderTable(url, user, password, tableName);
                database = url;
            }
            table.create();
            try {
                return run(database, table, args);
            }
            finally {
                table.drop();
            }
        }
        finally {
            if (h2 != null) {
                h2.stop();
            }
        }
    }

    private static Report run(String database, HolderTable table, String... args) {
        HolderProcess holderA = HolderProcess.start(table, args);
        try (ConfigurableApplicationContext instanceB = DemoInstances.start("instance-b", Map.of(), args)) {
            holderA.await("READY");
            LockService locks = instanceB.getBean(LockService.class);
            StringRedisTemplate redis = instanceB.getBean(StringRedisTemplate.class);
            Row plain = runMode(false, holderA, locks, table, redis);
            Row fenced = runMode(true, holderA, locks, table, redis);
            holderA.send("EXIT");
            return new Report(database, holderA.pid(), plain, fenced);
        }
        finally {
            holderA.close();
        }
    }

    private static Row runMode(boolean fenced, HolderProcess holderA, LockService locks, HolderTable table,
            StringRedisTemplate redis) {
        table.reset();
        holderA.send("LOCK " + KEY + " " + HOLDER_TTL.toMillis());
        long tokenA;
        try {
            tokenA = Long.parseLong(holderA.await("LOCKED"));
        }
        catch (IllegalStateException e) {
            throw new IllegalStateException(e.getMessage() + "\nThe lock's keys in Redis: " + lockState(redis), e);
        }
        holderA.signal("STOP");
        long stopped = System.nanoTime();
        long tokenB;
        int rowsB;
        // B waits for the lock like any instance would; it gets it when A's lease runs
        // out, since A, stopped,
        // cannot release or renew it.
        try (LockHandle lock = locks.lock(LockRequest.of(KEY)
            .withTtl(Duration.ofSeconds(10))
            .withWaitTime(Duration.ofSeconds(30))
            .withFencingToken())) {
            tokenB = lock.fencingToken();
            rowsB = table.write("instance-b", tokenB, fenced);
            if (!lock.release()) {
                throw new IllegalStateException(
                        "B's release found its lock gone; the lock's keys in Redis: " + lockState(redis));
            }
        }
        holderA.signal("CONT");
        Duration paused = Duration.ofNanos(System.nanoTime() - stopped);
        holderA.send("WRITE " + (fenced ? "fenced" : "plain"));
        String[] wrote = holderA.await("WROTE").split(" ");
        return new Row(fenced, tokenA, paused, Duration.ofMillis(Long.parseLong(wrote[2])), tokenB, rowsB,
                Integer.parseInt(wrote[0]), Boolean.parseBoolean(wrote[1]), table.holder());
    }

    /**
     * The lock's key, fencing counter and wait queue as Redis has them, for an error
     * message.
     */
    private static String lockState(StringRedisTemplate redis) {
        String lockKey = "lock:{" + KEY + "}";
        return lockKey + " = " + redis.opsForValue().get(lockKey) + " (pttl "
                + redis.getExpire(lockKey, TimeUnit.MILLISECONDS) + " ms), :fence = "
                + redis.opsForValue().get(lockKey + ":fence") + ", :queue = "
                + redis.opsForZSet()
                    .rangeWithScores(lockKey + ":queue", 0, -1)
                    .stream()
                    .map(entry -> entry.getValue() + "@" + entry.getScore())
                    .toList()
                + ", :waiting = " + redis.opsForHash().entries(lockKey + ":waiting");
    }

    private static Server startH2() {
        try (ServerSocket probe = new ServerSocket(0)) {
            int port = probe.getLocalPort();
            probe.close();
            // -ifNotExists: the in-memory database is created by the first connection,
            // which comes over TCP.
            return Server.createTcpServer("-tcpPort", Integer.toString(port), "-ifNotExists", "-tcpDaemon").start();
        }
        catch (IOException e) {
            throw new UncheckedIOException("No free port for the H2 server", e);
        }
        catch (SQLException e) {
            throw new IllegalStateException("Could not start the H2 TCP server: " + e.getMessage(), e);
        }
    }

    /** The second JVM and the line protocol of {@link PausedHolderProcess}. */
    private static final class HolderProcess implements AutoCloseable {

        private final Process process;

        private final Writer commands;

        private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();

        private final List<String> output = new ArrayList<>();

        private HolderProcess(Process process) {
            this.process = process;
            this.commands = process.outputWriter(StandardCharsets.UTF_8);
            Thread reader = new Thread(this::readAnswers, "paused-holder-output");
            reader.setDaemon(true);
            reader.start();
        }

        static HolderProcess start(HolderTable table, String... args) {
            List<String> command = new ArrayList<>(javaCommand(PausedHolderProcess.class.getName()));
            // The database goes by environment variables below: a password on a command
            // line is visible to
            // every user of the machine.
            command.addAll(Arrays.stream(args).filter(arg -> !arg.startsWith("--spring.datasource.")).toList());
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().put("SAMPLE_JDBC_URL", table.url());
            builder.environment().put("SAMPLE_JDBC_USER", table.user());
            builder.environment().put("SAMPLE_JDBC_PASSWORD", table.password());
            builder.environment().put("SAMPLE_JDBC_TABLE", table.table());
            try {
                return new HolderProcess(builder.start());
            }
            catch (IOException e) {
                throw new UncheckedIOException("Could not start the paused holder's JVM: " + command, e);
            }
        }

        /**
         * {@code java} with this JVM's class path and {@code mainClass}. From the
         * executable jar the class path is the jar itself, whose classes only Spring
         * Boot's launcher can load: {@code PropertiesLauncher} runs any main class of the
         * jar ({@code loader.main}).
         */
        private static List<String> javaCommand(String mainClass) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            String classPath = System.getProperty("java.class.path");
            // Quick startup matters more than peak speed for a JVM that takes one lock
            // and writes one row.
            List<String> command = new ArrayList<>(
                    List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", classPath));
            if (PausedHolderDemo.class.getClassLoader() == ClassLoader.getSystemClassLoader()) {
                command.add(mainClass);
            }
            else {
                command.add(command.size() - 2, "-Dloader.main=" + mainClass);
                command.add("org.springframework.boot.loader.launch.PropertiesLauncher");
            }
            return command;
        }

        long pid() {
            return process.pid();
        }

        void send(String line) {
            try {
                commands.write(line + "\n");
                commands.flush();
            }
            catch (IOException e) {
                throw new UncheckedIOException(
                        "The paused holder's JVM stopped listening; its output:\n" + String.join("\n", output()), e);
            }
        }

        /** Waits for the answer {@code @<word> ...} and returns what follows the word. */
        String await(String word) {
            try {
                String answer = answers.poll(ANSWER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                if (answer == null || !answer.startsWith(word)) {
                    throw new IllegalStateException("The paused holder's JVM answered " + answer + " instead of " + word
                            + "; its output:\n" + String.join("\n", output()));
                }
                return answer.substring(word.length()).trim();
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted while waiting for the paused holder", e);
            }
        }

        /** Sends {@code SIGSTOP} or {@code SIGCONT} with the {@code kill} command. */
        void signal(String signal) {
            try {
                Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                    .redirectErrorStream(true)
                    .start();
                String message = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                if (kill.waitFor() != 0) {
                    throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed: " + message);
                }
            }
            catch (IOException e) {
                throw new UncheckedIOException("Could not run kill -" + signal + " (the demo needs a POSIX kill)", e);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted while signalling the paused holder", e);
            }
        }

        private void readAnswers() {
            try (BufferedReader lines = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    if (line.startsWith("@")) {
                        answers.add(line.substring(1));
                    }
                    else {
                        synchronized (output) {
                            output.add(line);
                        }
                    }
                }
            }
            catch (IOException e) {
                // The process ended; await() reports the missing answer with the output
                // so far.
            }
            answers.add("(exited)");
        }

        private List<String> output() {
            synchronized (output) {
                return List.copyOf(output);
            }
        }

        /**
         * Resumes (in case it is still stopped) and ends the process, waiting briefly for
         * a clean exit.
         */
        @Override
        public void close() {
            if (process.isAlive()) {
                try {
                    signal("CONT");
                }
                catch (RuntimeException e) {
                    // It may have exited meanwhile; the destroy below covers the rest.
                }
            }
            try {
                commands.close();
            }
            catch (IOException e) {
                // Closing stdin is only a hint to exit.
            }
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
            catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }

    }

}
