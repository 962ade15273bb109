package io.github.distlock.testsupport.zookeeper;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * A real ZooKeeper ensemble for tests: each member a {@code QuorumPeerMain} in a JVM of
 * its own, started from the ZooKeeper jars on this JVM's classpath, on free loopback
 * ports, with its data in a temporary directory. Faults are real: a member can be killed
 * ({@code SIGKILL}), paused ({@code SIGSTOP}) and resumed, stopped and restarted on its
 * old ports and data.
 *
 * <pre>{@code
 * try (ZooKeeperTestEnsemble ensemble = ZooKeeperTestEnsemble.start()) {
 *     CuratorFramework client = CuratorFrameworkFactory.newClient(ensemble.connectString(), retry);
 *     ensemble.leader().kill();            // the others elect a new leader
 *     ensemble.awaitLeader(Duration.ofSeconds(30));
 * }
 * }</pre>
 *
 * <p>
 * Timing is scaled for tests on a busy machine: a tick of 500 ms, so a follower gives up
 * on a silent leader after 5 s ({@code syncLimit} 10) and a session lasts 1 s at least;
 * the longest session is 20 minutes, so that a client may ask for a session longer than
 * any lease a test takes. Every member's output goes to {@code member-<id>.log} in
 * {@link #directory()}; a failed start quotes the end of each.
 */
public final class ZooKeeperTestEnsemble implements AutoCloseable {

    /**
     * ZooKeeper's heartbeat unit, in ms: every other timing of the ensemble is a
     * multiple.
     */
    public static final int TICK_MILLIS = 500;

    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final Path directory;

    private final List<Member> members;

    private ZooKeeperTestEnsemble(Path directory, List<Member> members) {
        this.directory = directory;
        this.members = members;
    }

    /**
     * Starts three members and waits until they have elected a leader and each serves
     * clients.
     * @throws IllegalStateException if they do not within 90 s; the message names the
     * members' log files
     */
    public static ZooKeeperTestEnsemble start() {
        return start(3);
    }

    /**
     * Starts {@code size} members (an odd number) and waits until every one serves
     * clients.
     */
    public static ZooKeeperTestEnsemble start(int size) {
        if (size < 1 || size % 2 == 0) {
            throw new IllegalArgumentException("An ensemble needs an odd number of members, was " + size);
        }
        Path directory;
        try {
            directory = Files.createTempDirectory("zookeeper-ensemble-");
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        List<Member> members = new ArrayList<>();
        Set<Integer> taken = new HashSet<>();
        for (int id = 1; id <= size; id++) {
            members.add(new Member(id, directory.resolve("member-" + id), freePort(taken), freePort(taken),
                    freePort(taken)));
        }
        ZooKeeperTestEnsemble ensemble = new ZooKeeperTestEnsemble(directory, List.copyOf(members));
        try {
            for (Member member : members) {
                member.writeConfiguration(members);
                member.launch();
            }
            ensemble.awaitServing(START_TIMEOUT);
        }
        catch (RuntimeException | Error ex) {
            String logs = ensemble.logTails();
            ensemble.close();
            throw new IllegalStateException(ex.getMessage() + "\n" + logs, ex);
        }
        return ensemble;
    }

    /**
     * The connect string of every member, as a client gives it:
     * {@code 127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3}.
     */
    public String connectString() {
        return members.stream().map(Member::address).collect(Collectors.joining(","));
    }

    /** The members, by id from 1. */
    public List<Member> members() {
        return members;
    }

    /** The member with id {@code id}, from 1. */
    public Member member(int id) {
        return members.get(id - 1);
    }

    /** Where the members keep their data, configuration and logs. */
    public Path directory() {
        return directory;
    }

    /**
     * The current leader, as the members report it ({@code srvr}): the one running member
     * that says {@code Mode: leader}.
     * @throws IllegalStateException if none does within 30 s
     */
    public Member leader() {
        return awaitLeader(Duration.ofSeconds(30));
    }

    /** The leader, waiting up to {@code timeout} for one to be elected. */
    public Member awaitLeader(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Optional<Member> leader = currentLeader();
            if (leader.isPresent()) {
                return leader.get();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("No member of the ensemble reports itself leader after " + timeout
                        + "; modes: " + modes() + "; logs in " + directory);
            }
            sleep(100);
        }
    }

    /** The member reporting itself leader now, if any. */
    public Optional<Member> currentLeader() {
        // A one-member ensemble runs standalone: it leads itself.
        return members.stream().filter(member -> {
            String mode = member.mode();
            return "leader".equals(mode) || "standalone".equals(mode);
        }).findFirst();
    }

    /** The running members that are not the leader. */
    public List<Member> followers() {
        Member leader = leader();
        return members.stream().filter(member -> member != leader && member.isRunning()).toList();
    }

    /**
     * Waits until every running, unpaused member serves clients (reports a mode) and one
     * of them leads.
     */
    public void awaitServing(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            boolean allServing = members.stream()
                .filter(member -> member.isRunning() && !member.isPaused())
                .allMatch(member -> member.mode() != null);
            if (allServing && currentLeader().isPresent()) {
                return;
            }
            if (members.stream().noneMatch(Member::isRunning)) {
                throw new IllegalStateException(
                        "Every member of the ZooKeeper ensemble has exited; logs in " + directory);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("The ZooKeeper ensemble did not serve within " + timeout + "; modes: "
                        + modes() + "; logs in " + directory);
            }
            sleep(100);
        }
    }

    /** The last lines of each member's log, for a failure message. */
    String logTails() {
        StringBuilder tails = new StringBuilder();
        for (Member member : members) {
            Path log = directory.resolve("member-" + member.id() + ".log");
            try {
                List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
                tails.append("--- member-").append(member.id()).append(".log (last lines)\n");
                lines.subList(Math.max(0, lines.size() - 15), lines.size())
                    .forEach(line -> tails.append(line).append('\n'));
            }
            catch (IOException ex) {
                tails.append("--- member-").append(member.id()).append(".log unreadable: ").append(ex).append('\n');
            }
        }
        return tails.toString();
    }

    /**
     * Each member's mode as it reports it now, e.g. {@code {1=follower, 2=leader,
     * 3=down}}.
     */
    public String modes() {
        return members.stream().map(member -> {
            String mode = !member.isRunning() ? "down" : member.isPaused() ? "paused" : member.mode();
            return member.id() + "=" + (mode != null ? mode : "not serving");
        }).collect(Collectors.joining(", ", "{", "}"));
    }

    /**
     * Resumes paused members and starts stopped ones, then waits until all serve: the
     * ensemble as it was started, for the next test.
     */
    public void heal() {
        for (Member member : members) {
            if (member.isPaused()) {
                member.resume();
            }
            if (!member.isRunning()) {
                member.restart();
            }
        }
        awaitServing(START_TIMEOUT);
    }

    /**
     * Stops every member (resumed first, so that none stays frozen) and deletes the data.
     */
    @Override
    public void close() {
        for (Member member : members) {
            member.destroy();
        }
        try (Stream<Path> files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
        catch (IOException ex) {
            // A temporary directory left behind is not worth failing a test for.
        }
    }

    @Override
    public String toString() {
        return "ZooKeeper ensemble " + connectString() + " " + modes();
    }

    private static int freePort(Set<Integer> taken) {
        while (true) {
            try (ServerSocket socket = new ServerSocket()) {
                socket.setReuseAddress(false);
                socket.bind(new InetSocketAddress("127.0.0.1", 0));
                if (taken.add(socket.getLocalPort())) {
                    return socket.getLocalPort();
                }
            }
            catch (IOException ex) {
                throw new UncheckedIOException("No free port on 127.0.0.1", ex);
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for the ZooKeeper ensemble", ex);
        }
    }

    /**
     * One member: a {@code QuorumPeerMain} process and its ports, configuration and data.
     */
    public static final class Member {

        private final int id;

        private final Path directory;

        private final int clientPort;

        private final int quorumPort;

        private final int electionPort;

        private @Nullable Process process;

        private volatile boolean paused;

        Member(int id, Path directory, int clientPort, int quorumPort, int electionPort) {
            this.id = id;
            this.directory = directory;
            this.clientPort = clientPort;
            this.quorumPort = quorumPort;
            this.electionPort = electionPort;
        }

        /** The member's id ({@code myid}), from 1. */
        public int id() {
            return id;
        }

        /** The port clients connect to, on 127.0.0.1. */
        public int clientPort() {
            return clientPort;
        }

        /** {@code 127.0.0.1:<client port>}. */
        public String address() {
            return "127.0.0.1:" + clientPort;
        }

        /** The process id, or -1 when the member is not running. */
        public long pid() {
            Process running = process;
            return running != null && running.isAlive() ? running.pid() : -1;
        }

        /** Whether the member's process is alive (paused or not). */
        public boolean isRunning() {
            Process running = process;
            return running != null && running.isAlive();
        }

        /** Whether the member was paused by {@link #pause()} and not resumed yet. */
        public boolean isPaused() {
            return paused && isRunning();
        }

        /**
         * What the member says it is ({@code srvr}): {@code leader}, {@code follower},
         * {@code observer}, or {@code null} if it does not serve clients now (down,
         * paused, looking for a leader, or without a quorum).
         */
        public @Nullable String mode() {
            if (!isRunning() || paused) {
                return null;
            }
            String reply = fourLetterWord("srvr");
            if (reply == null) {
                return null;
            }
            for (String line : reply.split("\n")) {
                if (line.startsWith("Mode: ")) {
                    return line.substring("Mode: ".length()).trim();
                }
            }
            return null;
        }

        /**
         * Sends a four-letter word to the client port and returns the reply, or
         * {@code null} without one within a second.
         */
        public @Nullable String fourLetterWord(String word) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", clientPort), 1000);
                socket.setSoTimeout(1000);
                OutputStream out = socket.getOutputStream();
                out.write(word.getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = socket.getInputStream();
                String reply = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                // A member without a quorum answers "This ZooKeeper instance is not
                // currently serving requests".
                return reply.contains("not currently serving") || reply.isEmpty() ? null : reply;
            }
            catch (IOException ex) {
                return null;
            }
        }

        /**
         * Kills the process with {@code SIGKILL}, as a crash would: no goodbye to the
         * others, whose sessions and connections to it just break.
         */
        public void kill() {
            Process running = process;
            if (running == null || !running.isAlive()) {
                throw new IllegalStateException("Member " + id + " is not running");
            }
            signal(running.pid(), "KILL");
            awaitExit(running);
            paused = false;
        }

        /**
         * Stops the process with {@code SIGSTOP}: it keeps its sockets open but answers
         * nothing, as a long GC pause or a frozen VM.
         */
        public void pause() {
            Process running = process;
            if (running == null || !running.isAlive()) {
                throw new IllegalStateException("Member " + id + " is not running");
            }
            signal(running.pid(), "STOP");
            paused = true;
        }

        /** Lets a paused member go on ({@code SIGCONT}). */
        public void resume() {
            Process running = process;
            if (running != null && running.isAlive()) {
                signal(running.pid(), "CONT");
            }
            paused = false;
        }

        /**
         * Starts a stopped or killed member again, on its ports and its data. Returns at
         * once: {@link ZooKeeperTestEnsemble#awaitServing} waits for it to rejoin.
         */
        public void restart() {
            if (isRunning()) {
                throw new IllegalStateException("Member " + id + " is still running (pid " + pid() + ")");
            }
            launch();
        }

        /** Stops the member for good: resumed first if paused, then killed. */
        void destroy() {
            Process running = process;
            if (running != null && running.isAlive()) {
                if (paused) {
                    signal(running.pid(), "CONT");
                }
                running.destroyForcibly();
                awaitExit(running);
            }
            paused = false;
            LiveMembers.forget(running);
        }

        void writeConfiguration(List<Member> all) {
            try {
                Path data = directory.resolve("data");
                Files.createDirectories(data);
                Files.writeString(data.resolve("myid"), Integer.toString(id));
                StringBuilder cfg = new StringBuilder();
                cfg.append("tickTime=").append(TICK_MILLIS).append('\n');
                cfg.append("initLimit=20\n");
                cfg.append("syncLimit=10\n");
                cfg.append("dataDir=").append(data.toAbsolutePath()).append('\n');
                cfg.append("clientPort=").append(clientPort).append('\n');
                cfg.append("clientPortAddress=127.0.0.1\n");
                cfg.append("minSessionTimeout=").append(2 * TICK_MILLIS).append('\n');
                cfg.append("maxSessionTimeout=1200000\n");
                cfg.append("admin.enableServer=false\n");
                cfg.append("4lw.commands.whitelist=srvr,ruok,mntr,stat\n");
                // Small log files: the default preallocates 64 MB per member.
                cfg.append("preAllocSize=1024\n");
                cfg.append("standaloneEnabled=").append(all.size() == 1).append('\n');
                for (Member member : all) {
                    cfg.append("server.")
                        .append(member.id)
                        .append("=127.0.0.1:")
                        .append(member.quorumPort)
                        .append(':')
                        .append(member.electionPort)
                        .append('\n');
                }
                Files.writeString(directory.resolve("zoo.cfg"), cfg.toString());
                Files.writeString(directory.resolve("logback.xml"), """
                        <configuration>
                          <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
                            <encoder>
                              <pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{0} - %msg%n</pattern>
                            </encoder>
                          </appender>
                          <root level="INFO"><appender-ref ref="OUT"/></root>
                        </configuration>
                        """);
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }

        void launch() {
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            List<String> command = new ArrayList<>(List.of(java.toString(), "-Xms32m", "-Xmx192m", "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1",
                    "-Dlogback.configurationFile=" + directory.resolve("logback.xml").toAbsolutePath(),
                    // A test ensemble's data may be lost with the machine; skip the fsync
                    // per write.
                    "-Dzookeeper.forceSync=no", "-Dzookeeper.admin.enableServer=false",
                    "-Dzookeeper.jmx.log4j.disable=true", "-cp", System.getProperty("java.class.path"),
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                    directory.resolve("zoo.cfg").toAbsolutePath().toString()));
            try {
                Process started = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect
                        .appendTo(directory.resolve("../member-" + id + ".log").normalize().toFile()))
                    .start();
                process = started;
                paused = false;
                LiveMembers.register(started);
            }
            catch (IOException ex) {
                throw new UncheckedIOException("Could not start ZooKeeper member " + id + ": " + command, ex);
            }
        }

        private static void awaitExit(Process running) {
            try {
                if (!running.waitFor(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("ZooKeeper member pid " + running.pid() + " did not exit");
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted while waiting for pid " + running.pid() + " to exit", ex);
            }
        }

        @Override
        public String toString() {
            return "member " + id + " (" + address() + ", pid " + pid() + ")";
        }

    }

    /**
     * Sends a POSIX signal with {@code kill}: {@link Process} sends only TERM and KILL.
     */
    static void signal(long pid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true)
                .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not run kill -" + signal + " " + pid, ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while sending " + signal + " to " + pid, ex);
        }
    }

    /**
     * Members still running when the test JVM exits (a test that never closed its
     * ensemble, a failed start): a shutdown hook resumes and kills them, so that no
     * frozen server outlives the build.
     */
    static final class LiveMembers {

        private static final Set<Process> live = java.util.concurrent.ConcurrentHashMap.newKeySet();

        static {
            Runtime.getRuntime().addShutdownHook(new Thread(LiveMembers::killAll, "zookeeper-ensemble-reaper"));
        }

        private LiveMembers() {
        }

        static void register(Process process) {
            live.add(process);
        }

        static void forget(@Nullable Process process) {
            if (process != null) {
                live.remove(process);
            }
        }

        private static void killAll() {
            for (Process process : live) {
                if (process.isAlive()) {
                    try {
                        signal(process.pid(), "CONT");
                    }
                    catch (RuntimeException ex) {
                        // Killed below all the same.
                    }
                    process.destroyForcibly();
                }
            }
        }

    }

}
