package io.github.distlock.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Assumptions;

/**
 * A cluster of real {@code etcd} processes for a test (three members by default), each on
 * free loopback ports with its own data directory, plus the faults a consensus store has
 * to survive: {@link #kill(int)} (SIGKILL), {@link #pause(int)} (SIGSTOP),
 * {@link #resume(int)}, {@link #restart(int)}, and {@link #leader()} to find whom to hit.
 * With {@link #start(int, TlsCertificates)} the members serve their client URLs over TLS.
 *
 * <pre>{@code
 * try (EtcdTestCluster etcd = EtcdTestCluster.start()) {
 *     String endpoints = String.join(",", etcd.endpoints());   // for distributed-lock.etcd.endpoints
 *     etcd.kill(etcd.leader());                                 // the others elect a new leader
 *     etcd.awaitLeader();
 * }
 * }</pre>
 *
 * <p>
 * Only process management: it talks to the members over etcd's JSON gateway
 * ({@code /health}, {@code /v3/maintenance/status}) with the JDK's HTTP client, so it
 * adds no etcd client to a test's classpath. The binary is {@code -Detcd.bin=...},
 * {@code $ETCD_BIN}, {@code etcd} on the {@code PATH} or Debian's {@code /usr/bin/etcd}
 * (package {@code etcd-server}); without one, {@link #start()} skips the test with the
 * reason, or fails it on CI ({@code CI=true}), as the libfaketime tests do. Every process
 * is killed by a shutdown hook if a test forgets {@link #close()}.
 */
public final class EtcdTestCluster implements AutoCloseable {

    /** System property naming the etcd binary. */
    public static final String BINARY_PROPERTY = "etcd.bin";

    /** Environment variable naming the etcd binary. */
    public static final String BINARY_VARIABLE = "ETCD_BIN";

    private static final Logger logger = Logger.getLogger(EtcdTestCluster.class.getName());

    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(60);

    private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\"\\s*:\\s*\"?(\\d+)");

    private static final Pattern LEADER = Pattern.compile("\"leader\"\\s*:\\s*\"?(\\d+)");

    private final Path binary;

    private final Path directory;

    private final List<Member> members;

    private final HttpClient http;

    /**
     * The certificates the members serve their client URLs with, or {@code null} for
     * plain HTTP.
     */
    private final TlsCertificates tls;

    /** Whether the members accept only clients with a certificate of the CA. */
    private final boolean clientCertAuth;

    private EtcdTestCluster(Path binary, Path directory, int size, TlsCertificates tls, boolean clientCertAuth) {
        this.binary = binary;
        this.directory = directory;
        this.tls = tls;
        this.clientCertAuth = clientCertAuth;
        HttpClient.Builder client = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500));
        if (tls != null) {
            client.sslContext(clientCertAuth ? tls.clientSslContext() : tls.sslContext());
        }
        this.http = client.build();
        String token = "distlock-" + UUID.randomUUID();
        List<Member> created = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            created.add(new Member(i, RedisTestServer.pickFreePort(false), RedisTestServer.pickFreePort(false),
                    tls != null ? "https" : "http"));
        }
        String initialCluster = created.stream()
            .map(member -> member.name() + "=" + member.peerUrl())
            .collect(Collectors.joining(","));
        for (Member member : created) {
            member.initialCluster = initialCluster;
            member.clusterToken = token;
        }
        this.members = List.copyOf(created);
    }

    /** Starts a three-member cluster and waits until it has a leader. */
    public static EtcdTestCluster start() {
        return start(3);
    }

    /**
     * Starts a cluster of {@code size} members and waits until every member is healthy.
     * @param size members, 1 or more (odd sizes make sense)
     */
    public static EtcdTestCluster start(int size) {
        return start(size, null);
    }

    /**
     * Starts a cluster of {@code size} members whose client URLs are {@code https://},
     * served with {@code certificates} (the peers talk plain HTTP among themselves).
     * @param size members, 1 or more
     * @param certificates the CA and server certificate for {@code 127.0.0.1}, or
     * {@code null} for plain HTTP
     */
    public static EtcdTestCluster start(int size, TlsCertificates certificates) {
        return start(size, certificates, false);
    }

    /**
     * Starts a cluster of {@code size} members whose client URLs are {@code https://},
     * served with {@code certificates}, that accept only clients presenting a certificate
     * of the same CA (etcd's {@code --client-cert-auth}) if
     * {@code requireClientCertificates}.
     * @param size members, 1 or more
     * @param certificates the CA, the server certificate for {@code 127.0.0.1} and the
     * client certificate
     * @param requireClientCertificates whether clients must present a certificate
     */
    public static EtcdTestCluster start(int size, TlsCertificates certificates, boolean requireClientCertificates) {
        if (size < 1) {
            throw new IllegalArgumentException("An etcd cluster needs at least one member, not " + size);
        }
        Path binary = requireBinary();
        IllegalStateException failed = null;
        // Ports are picked free and bound by etcd a moment later: another process (a
        // parallel test JVM) may take one in between, so a cluster that fails to start is
        // tried again on new ports.
        for (int attempt = 0; attempt < 3; attempt++) {
            try {
                return startOnce(binary, size, certificates, requireClientCertificates);
            }
            catch (IllegalStateException ex) {
                failed = ex;
                logger
                    .warning(() -> "An etcd cluster failed to start, trying again on other ports: " + ex.getMessage());
            }
        }
        throw failed;
    }

    private static EtcdTestCluster startOnce(Path binary, int size, TlsCertificates certificates,
            boolean requireClientCertificates) {
        Path directory;
        try {
            directory = Files.createTempDirectory("etcd-test-cluster");
        }
        catch (IOException ex) {
            throw new UncheckedIOException("could not create a directory for the etcd members", ex);
        }
        EtcdTestCluster cluster = new EtcdTestCluster(binary, directory, size, certificates, requireClientCertificates);
        try {
            for (Member member : cluster.members) {
                cluster.launch(member);
            }
            for (Member member : cluster.members) {
                cluster.awaitHealthy(member);
            }
            logger.info(
                    () -> "EtcdTestCluster runs " + cluster.version() + " (" + binary + ") at " + cluster.endpoints());
            return cluster;
        }
        catch (RuntimeException | Error ex) {
            cluster.close();
            throw ex;
        }
    }

    /**
     * The etcd binary, or the test's end: outside CI a missing binary skips the test with
     * the reason, on CI ({@code CI=true}) it fails it, so that a CI machine without the
     * package cannot pass by skipping.
     */
    static Path requireBinary() {
        List<String> candidates = new ArrayList<>();
        String configured = System.getProperty(BINARY_PROPERTY);
        if (configured == null || configured.isBlank()) {
            configured = System.getenv(BINARY_VARIABLE);
        }
        if (configured != null && !configured.isBlank()) {
            candidates.add(configured);
        }
        else {
            String path = System.getenv("PATH");
            if (path != null) {
                for (String entry : path.split(java.io.File.pathSeparator)) {
                    if (!entry.isBlank()) {
                        candidates.add(Path.of(entry, "etcd").toString());
                    }
                }
            }
            candidates.add("/usr/bin/etcd");
        }
        for (String candidate : candidates) {
            Path file = Path.of(candidate);
            if (Files.isRegularFile(file) && Files.isExecutable(file)) {
                return file;
            }
        }
        String message = "EtcdTestCluster needs an etcd binary and found none (looked at " + candidates + "). Install "
                + "Debian's etcd-server package (apt-get install etcd-server, as .ci/run does), or name the binary "
                + "with -D" + BINARY_PROPERTY + "=... or " + BINARY_VARIABLE + ".";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException(message + " This is CI (CI=true), so the test fails rather than skips.");
        }
        Assumptions.abort(message + " Skipped because this is not CI (CI is not true).");
        throw new AssertionError("unreachable: Assumptions.abort throws");
    }

    /** The number of members. */
    public int size() {
        return members.size();
    }

    /**
     * Every member's client URL, {@code http://127.0.0.1:<port>}, in member order, for
     * {@code distributed-lock.etcd.endpoints}.
     */
    public List<String> endpoints() {
        return members.stream().map(Member::clientUrl).toList();
    }

    /** Member {@code index}'s client URL. */
    public String endpoint(int index) {
        return member(index).clientUrl();
    }

    /** Whether member {@code index}'s process is alive (a paused one is). */
    public synchronized boolean isRunning(int index) {
        Process process = member(index).process;
        return process != null && process.isAlive();
    }

    /** Whether member {@code index} is paused with SIGSTOP. */
    public synchronized boolean isPaused(int index) {
        return member(index).paused;
    }

    /**
     * Kills member {@code index} with SIGKILL, as a crash would; its data directory stays
     * for {@link #restart(int)}.
     */
    public synchronized void kill(int index) {
        Member member = member(index);
        Process process = member.process;
        if (process == null) {
            return;
        }
        if (member.paused) {
            LiveRedisProcesses.Signals.send(process.pid(), "CONT");
            member.paused = false;
        }
        process.destroyForcibly();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        LiveRedisProcesses.unregister(process);
        member.process = null;
    }

    /**
     * Freezes member {@code index} with SIGSTOP: its connections stay open and nothing
     * answers, as with a long GC pause or a stalled disk.
     */
    public synchronized void pause(int index) {
        Member member = member(index);
        requireRunning(member, "pause");
        if (!LiveRedisProcesses.Signals.send(member.process.pid(), "STOP")) {
            throw new IllegalStateException("could not send SIGSTOP to " + member);
        }
        member.paused = true;
    }

    /** Resumes member {@code index} after {@link #pause(int)} with SIGCONT. */
    public synchronized void resume(int index) {
        Member member = member(index);
        requireRunning(member, "resume");
        if (!LiveRedisProcesses.Signals.send(member.process.pid(), "CONT")) {
            throw new IllegalStateException("could not send SIGCONT to " + member);
        }
        member.paused = false;
    }

    /**
     * Starts member {@code index} again on the same ports and data directory (killing it
     * first if it runs), and waits until it is healthy, which needs a quorum of members
     * up.
     */
    public synchronized void restart(int index) {
        Member member = member(index);
        kill(index);
        launch(member);
        awaitHealthy(member);
    }

    /**
     * Starts member {@code index} again after {@link #kill(int)} without waiting for it:
     * a member of a cluster without quorum does not become healthy until enough others
     * are back.
     */
    public synchronized void startAgain(int index) {
        Member member = member(index);
        if (member.process != null && member.process.isAlive()) {
            throw new IllegalStateException(member + " is running");
        }
        launch(member);
    }

    /**
     * The index of the member that is leader now, as the running members report it.
     * @throws IllegalStateException if no running member knows a leader
     */
    public int leader() {
        return findLeader().orElseThrow(() -> new IllegalStateException("no member of " + this + " reports a leader"));
    }

    /**
     * Waits up to a minute until the running members agree on a leader, and returns it.
     */
    public int awaitLeader() {
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        while (true) {
            Optional<Integer> leader = findLeader();
            if (leader.isPresent()) {
                return leader.get();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no leader elected in " + this + " within " + STARTUP_TIMEOUT);
            }
            sleep(100);
        }
    }

    /** The leader as a member that answers reports it, if it is one of ours. */
    private Optional<Integer> findLeader() {
        List<String> ids = new ArrayList<>();
        String leaderId = null;
        for (Member member : members) {
            String status;
            synchronized (this) {
                if (member.process == null || member.paused) {
                    ids.add(null);
                    continue;
                }
            }
            status = post(member, "/v3/maintenance/status", "{}");
            String id = status == null ? null : group(MEMBER_ID, status);
            ids.add(id);
            String leader = status == null ? null : group(LEADER, status);
            if (leader != null && !"0".equals(leader)) {
                leaderId = leader;
            }
        }
        for (int i = 0; i < ids.size(); i++) {
            if (leaderId != null && leaderId.equals(ids.get(i))) {
                return Optional.of(i);
            }
        }
        return Optional.empty();
    }

    /** The etcd version the members run, as {@code etcd --version} prints it. */
    public String version() {
        try {
            Process process = new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            process.waitFor(10, TimeUnit.SECONDS);
            String first = output.lines().findFirst().orElse("etcd (version unknown)");
            return first.trim();
        }
        catch (IOException ex) {
            return "etcd (version unknown: " + ex.getMessage() + ")";
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return "etcd (version unknown)";
        }
    }

    /** Kills every member and deletes the data directories. */
    @Override
    public synchronized void close() {
        for (int i = 0; i < members.size(); i++) {
            kill(i);
        }
        LiveRedisProcesses.deleteRecursively(directory);
    }

    @Override
    public String toString() {
        return "etcd cluster " + endpoints();
    }

    private Member member(int index) {
        if (index < 0 || index >= members.size()) {
            throw new IllegalArgumentException(
                    "member " + index + " does not exist; this cluster has members 0 to " + (members.size() - 1));
        }
        return members.get(index);
    }

    private void requireRunning(Member member, String action) {
        if (member.process == null || !member.process.isAlive()) {
            throw new IllegalStateException("cannot " + action + " " + member + ": it is not running");
        }
    }

    private synchronized void launch(Member member) {
        Path data = directory.resolve(member.name());
        List<String> command = List.of(binary.toString(), "--name", member.name(), "--data-dir", data.toString(),
                "--listen-client-urls", member.clientUrl(), "--advertise-client-urls", member.clientUrl(),
                "--listen-peer-urls", member.peerUrl(), "--initial-advertise-peer-urls", member.peerUrl(),
                "--initial-cluster", member.initialCluster, "--initial-cluster-token", member.clusterToken,
                "--initial-cluster-state", "new", "--logger", "zap", "--log-outputs", "stderr");
        if (tls != null) {
            command = new ArrayList<>(command);
            command.addAll(List.of("--cert-file", tls.serverCertificate().toString(), "--key-file",
                    tls.serverKey().toString()));
            if (clientCertAuth) {
                command.addAll(List.of("--client-cert-auth", "--trusted-ca-file", tls.caCertificate().toString()));
            }
        }
        try {
            Path log = directory.resolve(member.name() + ".log");
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
            LiveRedisProcesses.register(process, data);
            member.process = process;
            member.paused = false;
        }
        catch (IOException ex) {
            throw new UncheckedIOException("could not start " + member + " with " + binary, ex);
        }
    }

    private void awaitHealthy(Member member) {
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        while (true) {
            Process process;
            synchronized (this) {
                process = member.process;
            }
            if (process == null || !process.isAlive()) {
                throw new IllegalStateException(
                        member + " exited while starting; its log ends with:\n" + logTail(member));
            }
            String health = get(member, "/health");
            if (health != null && health.replace(" ", "").contains("\"health\":\"true\"")) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(member + " was not healthy within " + STARTUP_TIMEOUT
                        + "; its log ends with:\n" + logTail(member));
            }
            sleep(100);
        }
    }

    private String logTail(Member member) {
        try {
            List<String> lines = Files.readAllLines(directory.resolve(member.name() + ".log"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        }
        catch (IOException ex) {
            return "(no log: " + ex.getMessage() + ")";
        }
    }

    private String get(Member member, String path) {
        return send(HttpRequest.newBuilder(URI.create(member.clientUrl() + path)).GET());
    }

    private String post(Member member, String path, String body) {
        return send(HttpRequest.newBuilder(URI.create(member.clientUrl() + path))
            .POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    /** The body of a 200 answer, or {@code null} for no answer in time or an error. */
    private String send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> response = http.send(request.timeout(Duration.ofSeconds(1)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? response.body() : null;
        }
        catch (IOException ex) {
            return null;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static String group(Pattern pattern, String text) {
        Matcher matcher = pattern.matcher(text);
        return matcher.find() ? matcher.group(1) : null;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the etcd cluster", ex);
        }
    }

    /** One member: its ports, and its process while it runs. */
    private static final class Member {

        private final int index;

        private final int clientPort;

        private final int peerPort;

        private String initialCluster;

        private String clusterToken;

        private Process process;

        private boolean paused;

        private final String clientScheme;

        Member(int index, int clientPort, int peerPort, String clientScheme) {
            this.index = index;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.clientScheme = clientScheme;
        }

        String name() {
            return "member" + index;
        }

        String clientUrl() {
            return clientScheme + "://" + RedisTestServer.HOST + ":" + clientPort;
        }

        String peerUrl() {
            return "http://" + RedisTestServer.HOST + ":" + peerPort;
        }

        @Override
        public String toString() {
            return "etcd " + name() + " (" + clientUrl() + ")";
        }

    }

}
