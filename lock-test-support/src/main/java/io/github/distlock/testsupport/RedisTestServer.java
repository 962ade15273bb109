package io.github.distlock.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Logger;

import javax.net.ssl.SSLSocketFactory;

/**
 * One real {@code redis-server} process for a test, on a free loopback port, with
 * persistence off and its own temporary directory, plus fault injection ({@link #kill()},
 * {@link #pause()}, {@link #restart()}) and a small RESP client
 * ({@link #command(String...)}) for inspecting it.
 *
 * <pre>{@code
 * try (RedisTestServer redis = RedisTestServer.start()) {
 *     redis.set("k", "v");
 *     redis.pause();                      // SIGSTOP: connections stay open, nothing answers
 *     ...
 *     redis.resume();
 * }
 * }</pre>
 *
 * <p>
 * It never uses port 6379, because a shared Redis may run there, and it binds
 * {@code 127.0.0.1} only. Every process is tracked, and a JVM shutdown hook kills
 * whatever a test forgot to close. The executable is chosen by {@link RedisServerBinary}:
 * {@code redis-server}, or {@code valkey-server} in a run with
 * {@code -Ddistlock.test.server=valkey}; the first start of each executable logs what it
 * runs ("Valkey 9.1.2"). Lifecycle methods are synchronized, so a test may, say, kill the
 * server from another thread while the code under test is busy with it.
 */
public final class RedisTestServer implements AutoCloseable {

    /**
     * The only address the servers listen on: tests must never reach beyond this machine.
     */
    public static final String HOST = "127.0.0.1";

    /** Where a developer's or CI's shared Redis runs; never used by the fixtures. */
    static final int SHARED_REDIS_PORT = 6379;

    /**
     * Redis Cluster listens for its node-to-node bus on the client port plus this offset.
     */
    static final int CLUSTER_BUS_PORT_OFFSET = 10_000;

    private static final int PORT_ATTEMPTS = 5;

    private static final Logger LOG = Logger.getLogger(RedisTestServer.class.getName());

    /** The executables whose product and version were logged. */
    private static final Set<Path> ANNOUNCED = ConcurrentHashMap.newKeySet();

    private static final Set<String> FIXTURE_OWNED_OPTIONS = Set.of("--port", "--bind", "--dir", "--logfile",
            "--daemonize", "--cluster-config-file", "--tls-port", "--tls-cert-file", "--tls-key-file",
            "--tls-ca-cert-file");

    private final Path binary;

    private final List<String> extraArgs;

    private final RedisTestServer master;

    private final boolean clusterEnabled;

    private final Duration startupTimeout;

    private final Duration commandTimeout;

    private final TlsCertificates tls;

    private final SSLSocketFactory tlsSockets;

    /**
     * The default user's password ({@code requirepass}), or {@code null} for a server
     * open to all.
     */
    private final String password;

    private final List<String> sentinelConfig;

    private final Consumer<RedisTestServer> afterStart;

    private final Path directory;

    private final FakeClock fakeClock;

    private int port;

    private Process process;

    private long pid = -1;

    private boolean paused;

    private boolean closed;

    private RedisTestServer(Builder builder) {
        this.binary = builder.binary != null ? builder.binary : RedisServerBinary.resolve();
        this.extraArgs = List.copyOf(builder.args);
        this.master = builder.master;
        this.clusterEnabled = builder.clusterEnabled;
        this.startupTimeout = builder.startupTimeout;
        this.commandTimeout = builder.commandTimeout;
        this.tls = builder.tls;
        this.tlsSockets = tls != null ? tls.socketFactory() : null;
        this.password = builder.password;
        this.sentinelConfig = builder.sentinelConfig;
        this.afterStart = builder.afterStart;
        try {
            this.directory = Files.createTempDirectory("redis-test-");
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not create a temp directory for redis-server", e);
        }
        this.fakeClock = builder.fakeClockLibrary != null ? new FakeClock(builder.fakeClockLibrary, directory) : null;
    }

    // ------------------------------------------------------------------------------------------------
    // factories

    /**
     * Starts a plain master with default settings and waits until it answers PING.
     * @return the running server; close it when done
     * @throws RedisStartupException when it does not start
     */
    public static RedisTestServer start() {
        return builder().start();
    }

    /**
     * A builder for servers with extra configuration (e.g. {@code --maxmemory}), a
     * replica, or a cluster node.
     * @return a new builder with default settings
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts {@code count} independent masters on distinct ports, e.g. for Redlock-style
     * quorum tests. If one fails to start, those already started are closed before the
     * exception propagates.
     * @param count how many servers, at least 1
     * @return the running servers in start order; close each when done
     */
    public static List<RedisTestServer> startMany(int count) {
        return builder().startMany(count);
    }

    /**
     * Starts a replica of {@code master} ({@code --replicaof}) and waits until
     * {@code master_link_status:up}, so that a test can write to the master right away
     * and expect the write to reach the replica.
     * @param master a running server
     * @return the running, linked replica; close it when done
     */
    public static RedisTestServer startReplicaOf(RedisTestServer master) {
        return builder().replicaOf(master).start();
    }

    // ------------------------------------------------------------------------------------------------
    // addressing

    /**
     * The host the server listens on.
     * @return always {@value #HOST}
     */
    public String host() {
        return HOST;
    }

    /**
     * The TCP port, which stays the same across {@link #restart()}.
     * @return the port; never 6379
     */
    public synchronized int port() {
        return port;
    }

    /**
     * The URI to hand to a client or to {@code spring.data.redis.url}.
     * @return {@code redis://127.0.0.1:PORT}, or {@code rediss://127.0.0.1:PORT} for a
     * TLS server
     */
    public String redisUri() {
        return (usesTls() ? "rediss://" : "redis://") + HOST + ":" + port();
    }

    /**
     * Whether the server speaks TLS only ({@link Builder#tls(TlsCertificates)});
     * {@link #port()} is then its TLS port, and it has no plain-text port.
     * @return {@code true} for a TLS server
     */
    public boolean usesTls() {
        return tls != null;
    }

    /**
     * The operating system process id; it changes on {@link #restart()}.
     * @return the pid of the current process, or of the last one once it was stopped or
     * killed
     */
    public synchronized long pid() {
        return pid;
    }

    /**
     * The server's own temporary directory (config, log, {@code nodes.conf}); deleted by
     * {@link #close()}.
     * @return the directory
     */
    public Path directory() {
        return directory;
    }

    /**
     * The server's log file, for diagnosing a failing test.
     * @return the path of {@code redis.log} in {@link #directory()}
     */
    public Path logFile() {
        return directory.resolve("redis.log");
    }

    /**
     * The last lines of the server log (and of its stdout/stderr), e.g. to attach to an
     * assertion message.
     * @param lines how many lines of each file at most
     * @return the text, possibly empty
     */
    public String logTail(int lines) {
        return tail(logFile(), lines) + tail(directory.resolve("stdout.log"), lines);
    }

    // ------------------------------------------------------------------------------------------------
    // lifecycle

    /**
     * Whether the process is alive; a paused process counts as running.
     * @return {@code true} between a successful start and {@link #stop()},
     * {@link #kill()} or {@link #close()}
     */
    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * Whether the process is stopped by {@link #pause()}.
     * @return {@code true} between {@link #pause()} and {@link #resume()}
     */
    public synchronized boolean isPaused() {
        return paused && isRunning();
    }

    /**
     * Stops the server gracefully with {@code SHUTDOWN NOSAVE} and waits for the process
     * to exit, killing it if it does not within a few seconds. Does nothing if it is not
     * running. A paused server is resumed first, because a stopped process cannot answer
     * SHUTDOWN.
     */
    public synchronized void stop() {
        if (!isRunning()) {
            return;
        }
        resume();
        try (RespConnection connection = connect(port, commandTimeout)) {
            connection.send("SHUTDOWN", "NOSAVE");
            connection.readReply(); // normally EOF: the server closes the connection as
                                    // it exits
        }
        catch (IOException | RedisErrorReplyException expected) {
            // EOF is the success case; on an error reply we fall back to killing below.
        }
        awaitExitOrKill(Duration.ofSeconds(5));
    }

    /**
     * Kills the process with SIGKILL ({@code kill -9}), as a crash or OOM kill would, and
     * waits for it to exit. Clients see their connections reset; nothing is shut down
     * cleanly. Does nothing if it is not running.
     */
    public synchronized void kill() {
        if (!isRunning()) {
            return;
        }
        process.destroyForcibly(); // SIGKILL on Unix; also ends a stopped process
        awaitExitOrKill(Duration.ofSeconds(5));
    }

    /**
     * Freezes the process with SIGSTOP: it stays alive and its connections stay open, but
     * nothing answers, like a long GC pause or a network partition. Commands sent
     * meanwhile time out (and are executed after {@link #resume()}). Returns once the
     * kernel reports the process stopped.
     * @throws IllegalStateException when the server is not running
     */
    public synchronized void pause() {
        requireRunning("pause");
        if (paused) {
            return;
        }
        if (!LiveRedisProcesses.Signals.send(pid, "STOP")) {
            throw new IllegalStateException("could not send SIGSTOP to redis-server pid " + pid);
        }
        paused = true;
        awaitProcessState(true);
    }

    /**
     * Continues a paused process with SIGCONT; it answers again (and works off what
     * queued up meanwhile). Does nothing if it is not paused.
     */
    public synchronized void resume() {
        if (!paused) {
            return;
        }
        paused = false;
        if (isRunning()) {
            LiveRedisProcesses.Signals.send(pid, "CONT");
            awaitProcessState(false);
        }
    }

    /**
     * Starts the server again on the same port, with the same configuration and
     * directory, and waits until it answers PING (and, for a replica, until its master
     * link is up). A running server is stopped first. As persistence is off, the data is
     * gone afterwards; cluster nodes keep their identity through {@code nodes.conf}.
     * @throws RedisStartupException when it does not come up, e.g. because another
     * process took the port
     * @throws IllegalStateException when the server was closed
     */
    public synchronized void restart() {
        if (closed) {
            throw new IllegalStateException("cannot restart a closed " + this);
        }
        stop();
        // Sentinel rewrites its config file with what it learned (its id, epochs, the
        // other sentinels, the current
        // master); a restarted sentinel must start from that, like a real one, not from
        // the original file.
        launchAndAwaitReady(port, sentinelConfig == null);
    }

    /**
     * Ends the server for good: resumes it if paused, kills it, and deletes its temporary
     * directory. Idempotent, so it is safe in {@code @AfterEach}, {@code finally} and
     * try-with-resources together.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        resume();
        kill();
        LiveRedisProcesses.deleteRecursively(directory);
    }

    // ------------------------------------------------------------------------------------------------
    // clock

    /**
     * Steps the server's wall clock by {@code by}, forward or back, while it runs, as an
     * NTP step or a VM resume would: from the server's next clock read on, every key's
     * expiry deadline is that much nearer (forward) or farther (back), {@code TIME} and
     * {@code uptime_in_seconds} move too, and timers (which run on the monotonic clock)
     * do not. Jumps add up, and the offset survives {@link #restart()}.
     *
     * <pre>{@code
     * RedisTestServer redis = RedisTestServer.builder().withFakeClock().start();
     * redis.command("SET", "k", "v", "PX", "30000");
     * redis.jumpClock(Duration.ofSeconds(31));     // k has expired, 30 s early by any real clock
     * redis.jumpClock(Duration.ofSeconds(-31));    // back to real time
     * }</pre>
     * @param by how far; negative moves the clock back
     * @return the offset from real time after the jump
     * @throws IllegalStateException when the server was not built with
     * {@link Builder#withFakeClock()}
     */
    public Duration jumpClock(Duration by) {
        return requireFakeClock("jumpClock").jump(Objects.requireNonNull(by, "by"));
    }

    /**
     * How far the server's wall clock is from real time: the sum of all
     * {@link #jumpClock(Duration)}s.
     * @return zero until the first jump
     * @throws IllegalStateException when the server was not built with
     * {@link Builder#withFakeClock()}
     */
    public Duration clockOffset() {
        return requireFakeClock("clockOffset").offset();
    }

    private FakeClock requireFakeClock(String method) {
        if (fakeClock == null) {
            throw new IllegalStateException(method + "() needs a server started with RedisTestServer.builder()"
                    + ".withFakeClock(); " + this + " runs on the real clock");
        }
        return fakeClock;
    }

    // ------------------------------------------------------------------------------------------------
    // commands

    /**
     * Runs one command on a short-lived connection with the builder's command timeout (5
     * s by default), so a paused or dead server makes the call fail instead of hanging
     * the test.
     * @param args the command and its arguments, e.g. {@code "CONFIG", "RESETSTAT"}
     * @return the reply, mapped as described in {@link RespConnection}
     * @throws UncheckedIOException when the server cannot be reached or does not answer
     * in time
     * @throws RedisErrorReplyException when Redis answers with an error
     */
    public Object command(String... args) {
        return command(commandTimeout, args);
    }

    /**
     * Runs one command on a short-lived connection with the given timeout, e.g. a short
     * one to show that a paused server does not answer without making the test slow.
     * @param timeout connect and read timeout
     * @param args the command and its arguments
     * @return the reply, mapped as described in {@link RespConnection}
     * @throws UncheckedIOException when the server cannot be reached or does not answer
     * in time
     * @throws RedisErrorReplyException when Redis answers with an error
     */
    public Object command(Duration timeout, String... args) {
        try (RespConnection connection = connect(port(), timeout)) {
            return connection.command(args);
        }
        catch (IOException e) {
            throw new UncheckedIOException("redis-server at " + HOST + ":" + port() + " did not answer "
                    + (args.length > 0 ? args[0] : "") + " within " + timeout.toMillis() + " ms: " + e, e);
        }
    }

    /**
     * Opens a long-lived connection, e.g. to {@code SUBSCRIBE}, to hold a client that
     * shows up in {@code CLIENT LIST}, or to see what an open connection experiences
     * during {@link #pause()}.
     * @return a connection with the builder's command timeout as read timeout; close it
     * when done
     * @throws UncheckedIOException when the server cannot be reached
     */
    public RespConnection openConnection() {
        try {
            return connect(port(), commandTimeout);
        }
        catch (IOException e) {
            throw new UncheckedIOException("cannot connect to redis-server at " + HOST + ":" + port(), e);
        }
    }

    /**
     * {@code PING}.
     * @return {@code "PONG"}
     */
    public String ping() {
        return (String) command("PING");
    }

    /**
     * {@code INFO section}, e.g. {@code "replication"}, {@code "commandstats"},
     * {@code "clients"}.
     * @param section the INFO section
     * @return the raw INFO text
     */
    public String info(String section) {
        return (String) command("INFO", section);
    }

    /**
     * One field of an INFO section, e.g.
     * {@code infoValue("replication", "master_link_status")}.
     * @param section the INFO section
     * @param field the field name before the colon
     * @return the value, or {@code null} if the section has no such field
     */
    public String infoValue(String section, String field) {
        return parseInfoField(info(section), field);
    }

    /**
     * {@code DBSIZE}.
     * @return the number of keys in the current database
     */
    public long dbSize() {
        return (Long) command("DBSIZE");
    }

    /** {@code FLUSHALL}, to isolate tests that share a server. */
    public void flushAll() {
        command("FLUSHALL");
    }

    /**
     * {@code SET key value}.
     * @param key the key
     * @param value the value
     */
    public void set(String key, String value) {
        command("SET", key, value);
    }

    /**
     * {@code GET key}.
     * @param key the key
     * @return the value, or {@code null} if absent
     */
    public String get(String key) {
        return (String) command("GET", key);
    }

    /**
     * {@code DEL key...}.
     * @param keys the keys
     * @return how many existed and were deleted
     */
    public long del(String... keys) {
        String[] args = new String[keys.length + 1];
        args[0] = "DEL";
        System.arraycopy(keys, 0, args, 1, keys.length);
        return (Long) command(args);
    }

    /**
     * All keys matching a glob pattern, found with {@code SCAN ... MATCH} (which, unlike
     * {@code KEYS}, does not block the server on a large keyspace). A key that exists
     * during the whole scan is returned exactly once.
     * @param pattern a {@code MATCH} pattern such as {@code "lock:*"}; escape glob
     * characters of a literal part with a backslash
     * @return the keys, in scan order
     */
    public List<String> scan(String pattern) {
        List<String> keys = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        String cursor = "0";
        do {
            List<?> reply = (List<?>) command("SCAN", cursor, "MATCH", pattern, "COUNT", "1000");
            cursor = (String) reply.get(0);
            for (Object key : (List<?>) reply.get(1)) {
                // SCAN may return a key more than once (e.g. while the table is
                // rehashed).
                if (seen.add((String) key)) {
                    keys.add((String) key);
                }
            }
        }
        while (!"0".equals(cursor));
        return keys;
    }

    /**
     * {@code PTTL key}: remaining time to live, to check what lease a lock was written
     * with.
     * @param key the key
     * @return milliseconds left, {@code -1} if the key has no expiry, {@code -2} if it
     * does not exist
     */
    public long pttl(String key) {
        return (Long) command("PTTL", key);
    }

    /**
     * {@code PTTL} of many keys, pipelined on one connection: one round trip's worth of
     * latency instead of one per key, so that a test can watch a thousand leases at once.
     * @param keys the keys
     * @return key to milliseconds left ({@code -1} no expiry, {@code -2} no such key), in
     * the order given
     * @throws UncheckedIOException when the server does not answer in time
     */
    public Map<String, Long> pttls(Collection<String> keys) {
        Map<String, Long> result = new LinkedHashMap<>();
        try (RespConnection connection = openConnection()) {
            for (String key : keys) {
                connection.send("PTTL", key);
            }
            for (String key : keys) {
                result.put(key, (Long) connection.readReply());
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(
                    "redis-server at " + HOST + ":" + port() + " did not answer PTTL of " + keys.size() + " keys: " + e,
                    e);
        }
        return result;
    }

    /**
     * {@code CONFIG RESETSTAT}, so that {@link #commandCalls(String)} counts only what a
     * test did.
     */
    public void resetStats() {
        command("CONFIG", "RESETSTAT");
    }

    /**
     * How often a command ran since start or {@link #resetStats()}, from
     * {@code INFO commandstats}; lets a test assert round trips, e.g. that acquiring a
     * lock costs one {@code evalsha}.
     * @param commandName e.g. {@code "set"}, {@code "evalsha"}, or {@code "client|list"}
     * for a subcommand
     * @return the number of calls, 0 if never called
     */
    public long commandCalls(String commandName) {
        String stats = parseInfoField(info("commandstats"), "cmdstat_" + commandName.toLowerCase(Locale.ROOT));
        if (stats == null) {
            return 0;
        }
        for (String part : stats.split(",")) {
            if (part.startsWith("calls=")) {
                return Long.parseLong(part.substring("calls=".length()));
            }
        }
        return 0;
    }

    /**
     * How many scripts clients sent since start or {@link #resetStats()}: {@code EVALSHA}
     * plus {@code EVAL} calls (a client falls back to {@code EVAL} when the server lacks
     * the script), one round trip each.
     */
    public long scriptCalls() {
        return commandCalls("evalsha") + commandCalls("eval");
    }

    /**
     * How many error replies of one kind the server sent since start or
     * {@link #resetStats()}, from {@code INFO errorstats}; lets a test see that a client
     * met, say, {@code TRYAGAIN} or {@code NOPERM}.
     * @param errorCode the first word of the error, e.g. {@code "TRYAGAIN"} or
     * {@code "NOPERM"}
     * @return the number of such replies, 0 if none
     */
    public long errorReplies(String errorCode) {
        String stats = parseInfoField(info("errorstats"), "errorstat_" + errorCode.toUpperCase(Locale.ROOT));
        if (stats == null || !stats.startsWith("count=")) {
            return 0;
        }
        return Long.parseLong(stats.substring("count=".length()));
    }

    /**
     * {@code PUBSUB NUMSUB channel}: how many clients subscribe to a channel, e.g.
     * waiters for a lock release.
     * @param channel the channel name
     * @return the number of subscribers
     */
    public long subscriberCount(String channel) {
        List<?> reply = (List<?>) command("PUBSUB", "NUMSUB", channel);
        return (Long) reply.get(1);
    }

    /**
     * The lines of {@code CLIENT LIST}, one per connected client, including the
     * connection used to ask.
     * @return the client descriptions
     */
    public List<String> clientList() {
        String text = (String) command("CLIENT", "LIST");
        List<String> lines = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (!line.isBlank()) {
                lines.add(line.trim());
            }
        }
        return lines;
    }

    /**
     * The number of connected clients other than the connection used to ask, e.g. to
     * check that a client pool was closed.
     * @return {@code connected_clients} from {@code INFO clients}, minus one
     */
    public long connectedClients() {
        return Long.parseLong(infoValue("clients", "connected_clients")) - 1;
    }

    /**
     * Waits until this replica reports {@code master_link_status:up}, e.g. after its
     * master was restarted.
     * @param timeout how long to wait at most
     * @throws IllegalStateException when the link is not up in time
     */
    public void awaitMasterLinkUp(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        String status = null;
        while (System.nanoTime() < deadline) {
            try {
                status = infoValue("replication", "master_link_status");
                if ("up".equals(status)) {
                    return;
                }
            }
            catch (UncheckedIOException | RedisErrorReplyException e) {
                status = e.toString();
            }
            sleepMillis(20);
        }
        throw new IllegalStateException(this + " did not report master_link_status:up within " + timeout + " (last: "
                + status + ")\n" + logTail(20));
    }

    // ------------------------------------------------------------------------------------------------
    // replication

    /**
     * How far this server's copy of the replication stream goes:
     * {@code master_repl_offset} of {@code INFO replication}. On a master it counts the
     * bytes of every write it propagated; on a replica, what the replica has received and
     * applied. A replica whose offset is below its master's lacks the latest writes.
     *
     * <pre>{@code
     * long written = master.replicationOffset();
     * replica.awaitCaughtUpWith(master, Duration.ofSeconds(5));   // now replica.replicationOffset() >= written
     * }</pre>
     * @return the offset in bytes
     */
    public long replicationOffset() {
        return Long.parseLong(infoValue("replication", "master_repl_offset"));
    }

    /**
     * The offset each replica connected to this master last acknowledged, from the
     * {@code slaveN:} lines of {@code INFO replication}. {@code WAIT n} counts exactly
     * these acknowledgements, so this is how a test sees why a {@code WAIT} returned what
     * it did. Replicas acknowledge about once a second, and at once when a {@code WAIT}
     * asks them to, so an offset here may lag what the replica has applied
     * ({@link #replicationOffset()} on it).
     *
     * <pre>{@code
     * assertThat(master.replicaAckOffsets()).containsOnlyKeys(replica.port());
     * }</pre>
     * @return replica port to acknowledged offset, in the order the master lists them;
     * empty when none is connected
     */
    public Map<Integer, Long> replicaAckOffsets() {
        Map<Integer, Long> offsets = new LinkedHashMap<>();
        for (String line : info("replication").split("\r?\n")) {
            // e.g. "slave0:ip=127.0.0.1,port=41235,state=online,offset=1234,lag=0"
            if (!line.matches("slave\\d+:.*")) {
                continue;
            }
            Map<String, String> fields = new LinkedHashMap<>();
            for (String pair : line.substring(line.indexOf(':') + 1).trim().split(",")) {
                int equals = pair.indexOf('=');
                if (equals > 0) {
                    fields.put(pair.substring(0, equals), pair.substring(equals + 1));
                }
            }
            offsets.put(Integer.parseInt(fields.get("port")), Long.parseLong(fields.get("offset")));
        }
        return offsets;
    }

    /**
     * Waits until this replica has applied everything {@code master} had propagated when
     * the call began, by comparing {@link #replicationOffset()}s. Unlike a {@code WAIT}
     * on a fresh connection, which only waits for that connection's own (absent) writes,
     * this covers writes made by any client.
     *
     * <pre>{@code
     * master.set("lock:{order-42}", "token-a");
     * replica.awaitCaughtUpWith(master, Duration.ofSeconds(5));
     * assertThat(replica.get("lock:{order-42}")).isEqualTo("token-a");
     * }</pre>
     * @param master the server this one replicates from
     * @param timeout how long to wait at most
     * @throws IllegalStateException when the replica does not catch up in time
     */
    public void awaitCaughtUpWith(RedisTestServer master, Duration timeout) {
        long target = master.replicationOffset();
        long deadline = System.nanoTime() + timeout.toNanos();
        long reached = -1;
        while (System.nanoTime() < deadline) {
            reached = replicationOffset();
            if (reached >= target) {
                return;
            }
            sleepMillis(5);
        }
        throw new IllegalStateException(this + " did not reach replication offset " + target + " of " + master
                + " within " + timeout + " (reached " + reached + ")");
    }

    /**
     * Closes this master's connections to all its replicas
     * ({@code CLIENT KILL TYPE replica}), so that nothing it writes from now on leaves
     * the process. A running replica reconnects within about a second and catches up with
     * a partial resync; {@link #pause()} it first to keep it cut off, as
     * {@link ReplicaFailover} does.
     *
     * <pre>{@code
     * replica.pause();
     * master.disconnectReplicas();
     * master.set("lock:{order-42}", "token-a");    // on the master only
     * }</pre>
     * @return how many replica connections were closed
     */
    public long disconnectReplicas() {
        return (Long) command("CLIENT", "KILL", "TYPE", "replica");
    }

    /**
     * Makes this replica a master ({@code REPLICAOF NO ONE}), keeping its data: the
     * manual form of a failover. Sentinel sends the same command when it promotes a
     * replica.
     *
     * <pre>{@code
     * master.kill();
     * replica.promoteToMaster();
     * replica.set("k", "v");       // accepts writes now
     * }</pre>
     */
    public void promoteToMaster() {
        command("REPLICAOF", "NO", "ONE"); // synchronous: the role has changed when the
                                           // reply arrives
    }

    /**
     * Address and pid, for assertion messages and logs.
     * @return e.g. {@code RedisTestServer[127.0.0.1:41234, pid 4711]}
     */
    @Override
    public String toString() {
        return "RedisTestServer[" + HOST + ":" + port() + ", pid " + pid() + "]";
    }

    /**
     * The product and its own version, as the running server reports them: Valkey's from
     * {@code valkey_version}, not the {@code redis_version} it claims for compatibility.
     * @return e.g. {@code Valkey 9.1.2} or {@code Redis 7.0.15}
     */
    public String serverName() {
        return ServerKind.describe(info("server"));
    }

    /**
     * Which server this is, as it reports itself ({@code INFO server}).
     * @return {@link ServerKind#VALKEY} or {@link ServerKind#REDIS}
     */
    public ServerKind serverKind() {
        return ServerKind.of(info("server"));
    }

    // ------------------------------------------------------------------------------------------------
    // internals

    /**
     * Logs once per executable and JVM which server and version it is, so a run's log
     * says what it tested.
     */
    private void announce(String infoServer) {
        if (ANNOUNCED.add(binary.toAbsolutePath())) {
            String compatibility = ServerKind.of(infoServer) == ServerKind.VALKEY
                    ? " (redis_version " + parseInfoField(infoServer, "redis_version") + " for compatibility)" : "";
            LOG.info(() -> "RedisTestServer runs " + ServerKind.describe(infoServer) + compatibility + ": " + binary);
        }
    }

    /** The fixture's own connections: over TLS to a TLS server, trusting only its CA. */
    private RespConnection connect(int targetPort, Duration timeout) throws IOException {
        RespConnection connection = tlsSockets != null ? RespConnection.open(HOST, targetPort, timeout, tlsSockets)
                : RespConnection.open(HOST, targetPort, timeout);
        if (password != null) {
            try {
                connection.command("AUTH", password);
            }
            catch (IOException | RuntimeException e) {
                connection.close();
                throw e;
            }
        }
        return connection;
    }

    private void startOnFreePort() {
        RedisStartupException lastPortClash = null;
        for (int attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
            int candidate = pickFreePort(clusterEnabled);
            // A fresh log per attempt, so an earlier port clash is not mistaken for the
            // cause of a later failure.
            deleteLogs();
            try {
                launchAndAwaitReady(candidate, true);
                return;
            }
            catch (PortClashException e) {
                // Another process took the port between our probe and redis-server's
                // bind: try another one.
                lastPortClash = e;
            }
        }
        throw lastPortClash;
    }

    private void deleteLogs() {
        try {
            Files.deleteIfExists(logFile());
            Files.deleteIfExists(directory.resolve("stdout.log"));
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not reset the logs in " + directory, e);
        }
    }

    private void launchAndAwaitReady(int targetPort, boolean freshConfig) {
        this.port = targetPort;
        // A replica's full sync leaves the master's snapshot in dump.rdb even with "save"
        // off; a restarted server
        // must not load it, or it would come back serving stale data (old lock keys)
        // instead of empty.
        deleteSnapshot();
        List<String> commandLine = new ArrayList<>();
        commandLine.add(binary.toString());
        commandLine.add((freshConfig ? writeConfigFile(targetPort) : configFile()).toString());
        if (sentinelConfig != null) {
            commandLine.add("--sentinel"); // must follow the config file, which Sentinel
                                           // insists on being writable
        }
        if (master != null) {
            commandLine.addAll(List.of("--replicaof", master.host(), Integer.toString(master.port())));
        }
        commandLine.addAll(extraArgs);
        try {
            ProcessBuilder processBuilder = new ProcessBuilder(commandLine).directory(directory.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("stdout.log").toFile()));
            if (fakeClock != null) {
                fakeClock.configure(processBuilder.environment());
            }
            process = processBuilder.start();
        }
        catch (IOException e) {
            throw new RedisStartupException("could not run " + commandLine, e);
        }
        pid = process.pid();
        paused = false;
        LiveRedisProcesses.register(process, directory);
        try {
            awaitPong(commandLine);
            if (fakeClock != null) {
                fakeClock.requireLoadedBy(pid, binary);
            }
            if (master != null) {
                awaitMasterLinkUp(startupTimeout);
            }
            if (afterStart != null) {
                afterStart.accept(this);
            }
        }
        catch (RuntimeException e) {
            kill();
            throw e;
        }
    }

    private void awaitPong(List<String> commandLine) {
        long deadline = System.nanoTime() + startupTimeout.toNanos();
        Exception lastFailure = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                awaitExitOrKill(Duration.ofSeconds(1));
                String log = logTail(30);
                String message = "redis-server exited with code " + process.exitValue() + " during startup on port "
                        + port + "\ncommand: " + String.join(" ", commandLine) + "\nlog tail:\n" + log;
                if (log.contains("already in use")) {
                    throw new PortClashException(message);
                }
                throw new RedisStartupException(message, null);
            }
            try (RespConnection connection = connect(port, Duration.ofMillis(500))) {
                Object pong = connection.command("PING");
                String info = (String) connection.command("INFO", "server");
                String processId = parseInfoField(info, "process_id");
                if (!"PONG".equals(pong)) {
                    lastFailure = new IllegalStateException("unexpected PING reply " + pong);
                }
                else if (!Long.toString(pid).equals(processId)) {
                    // Someone else's server answered on this port; ours will fail to
                    // bind.
                    kill();
                    throw new PortClashException(
                            "port " + port + " is served by pid " + processId + ", not by our redis-server pid " + pid);
                }
                else {
                    announce(info);
                    return;
                }
            }
            catch (IOException | RedisErrorReplyException e) {
                lastFailure = e; // not listening yet, or still loading
            }
            sleepMillis(10);
        }
        throw new RedisStartupException("redis-server pid " + pid + " did not answer PING on port " + port + " within "
                + startupTimeout + "\ncommand: " + String.join(" ", commandLine) + "\nlog tail:\n" + logTail(30),
                lastFailure);
    }

    /**
     * Fixed settings go into a config file rather than onto the command line:
     * {@code save ""} is spelled the same way for every Redis version there, while
     * command-line quoting of an empty argument differs between 6.2 and 7.
     */
    private Path writeConfigFile(int targetPort) {
        StringBuilder config = new StringBuilder()
            .append("# written by lock-test-support RedisTestServer; persistence is off on purpose\n")
            .append("port ")
            .append(tls != null ? 0 : targetPort)
            .append('\n')
            .append("bind ")
            .append(HOST)
            .append('\n')
            .append("daemonize no\n")
            .append("save \"\"\n")
            .append("appendonly no\n")
            .append("dir ")
            .append(quote(directory.toString()))
            .append('\n')
            .append("logfile ")
            .append(quote(logFile().toString()))
            .append('\n')
            .append("loglevel notice\n")
            // A replica's full sync would otherwise wait 5 s (Redis 7 default) for more
            // replicas to join.
            .append("repl-diskless-sync-delay 0\n");
        if (tls != null) {
            config.append("tls-port ")
                .append(targetPort)
                .append('\n')
                .append("tls-cert-file ")
                .append(quote(tls.serverCertificate().toString()))
                .append('\n')
                .append("tls-key-file ")
                .append(quote(tls.serverKey().toString()))
                .append('\n')
                .append("tls-ca-cert-file ")
                .append(quote(tls.caCertificate().toString()))
                .append('\n')
                .append("tls-auth-clients no\n");
        }
        if (password != null) {
            config.append("requirepass ").append(quote(password)).append('\n');
        }
        if (clusterEnabled) {
            config.append("cluster-enabled yes\n")
                .append("cluster-config-file ")
                .append(quote(directory.resolve("nodes.conf").toString()))
                .append('\n');
        }
        if (sentinelConfig != null) {
            sentinelConfig.forEach(line -> config.append(line).append('\n'));
        }
        Path file = configFile();
        try {
            Files.writeString(file, config.toString(), StandardCharsets.UTF_8);
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not write " + file, e);
        }
        return file;
    }

    private void deleteSnapshot() {
        try {
            Files.deleteIfExists(directory.resolve("dump.rdb"));
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not delete the stale snapshot in " + directory, e);
        }
    }

    private Path configFile() {
        return directory.resolve("redis.conf");
    }

    private void awaitExitOrKill(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                LiveRedisProcesses.Signals.send(pid, "CONT");
                process.destroyForcibly();
                process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        paused = false;
        if (!process.isAlive()) {
            LiveRedisProcesses.unregister(process);
        }
    }

    /**
     * Signals are asynchronous; tests need the process really stopped (or running) when
     * pause/resume return.
     */
    private void awaitProcessState(boolean stopped) {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        if (!Files.exists(stat)) {
            return; // no procfs (macOS): the signal is delivered promptly anyway
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() < deadline) {
            try {
                String content = Files.readString(stat);
                // Format: "pid (comm) state ..."; comm may contain spaces, so look after
                // the last ')'.
                char state = content.charAt(content.lastIndexOf(')') + 2);
                boolean isStopped = state == 'T' || state == 't';
                if (isStopped == stopped) {
                    return;
                }
            }
            catch (IOException | IndexOutOfBoundsException e) {
                return; // the process went away; callers see that via isRunning()
            }
            sleepMillis(1);
        }
    }

    private void requireRunning(String action) {
        if (!isRunning()) {
            throw new IllegalStateException("cannot " + action + " " + this + ": it is not running");
        }
    }

    static int pickFreePort(boolean needsClusterBusPort) {
        for (int attempt = 0; attempt < 200; attempt++) {
            int candidate;
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
                candidate = socket.getLocalPort();
            }
            catch (IOException e) {
                throw new UncheckedIOException("could not probe for a free port", e);
            }
            if (candidate == SHARED_REDIS_PORT) {
                continue;
            }
            if (needsClusterBusPort) {
                int busPort = candidate + CLUSTER_BUS_PORT_OFFSET;
                if (busPort > 65_535 || busPort == SHARED_REDIS_PORT || !isFree(busPort)) {
                    continue;
                }
            }
            return candidate;
        }
        throw new IllegalStateException("found no free port on " + HOST);
    }

    private static boolean isFree(int port) {
        try (ServerSocket ignored = new ServerSocket(port, 1, InetAddress.getByName(HOST))) {
            return true;
        }
        catch (IOException e) {
            return false;
        }
    }

    static String parseInfoField(String info, String field) {
        String prefix = field + ":";
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
        return null;
    }

    private static String tail(Path file, int lines) {
        try {
            if (!Files.exists(file)) {
                return "";
            }
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            List<String> last = all.subList(Math.max(0, all.size() - lines), all.size());
            return last.isEmpty() ? "" : String.join("\n", last) + "\n";
        }
        catch (IOException | UncheckedIOException e) {
            return "(could not read " + file + ": " + e + ")\n";
        }
    }

    private static String quote(String value) {
        return '"' + value.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for redis-server", e);
        }
    }

    /**
     * Startup failed because the port was taken; {@link #startOnFreePort()} retries with
     * another one.
     */
    private static final class PortClashException extends RedisStartupException {

        private static final long serialVersionUID = 1L;

        PortClashException(String message) {
            super(message, null);
        }

    }

    // ------------------------------------------------------------------------------------------------
    // builder

    /**
     * Configures and starts {@link RedisTestServer}s. A builder can start any number of
     * servers; each gets its own port and directory.
     */
    public static final class Builder {

        private Path binary;

        private final List<String> args = new ArrayList<>();

        private RedisTestServer master;

        private boolean clusterEnabled;

        private TlsCertificates tls;

        private String password;

        private List<String> sentinelConfig;

        private Consumer<RedisTestServer> afterStart;

        private boolean fakeClock;

        private Path fakeClockLibrary;

        private Duration startupTimeout = Duration.ofSeconds(10);

        private Duration commandTimeout = Duration.ofSeconds(5);

        private Builder() {
        }

        /**
         * Runs this executable instead of the one {@link RedisServerBinary#resolve()}
         * picks, e.g. {@link RedisServerBinary#bundled()} to test against Redis 6.2.
         * @param redisServer path of a {@code redis-server} executable
         * @return this builder
         */
        public Builder binary(Path redisServer) {
            this.binary = Objects.requireNonNull(redisServer, "redisServer");
            return this;
        }

        /**
         * Adds command-line configuration, e.g. {@code args("--maxmemory", "10mb")} or
         * {@code args("--notify-keyspace-events", "Ex")}. Port, bind address, directory
         * and log file belong to the fixture and are rejected.
         * @param configArgs options in {@code --name value...} form
         * @return this builder
         * @throws IllegalArgumentException for an option the fixture owns
         */
        public Builder args(String... configArgs) {
            for (String arg : configArgs) {
                Objects.requireNonNull(arg, "config arguments must not be null");
                if (FIXTURE_OWNED_OPTIONS.contains(arg.toLowerCase(Locale.ROOT))) {
                    throw new IllegalArgumentException(arg + " is set by RedisTestServer itself");
                }
            }
            args.addAll(Arrays.asList(configArgs));
            return this;
        }

        /**
         * Makes the servers replicas of {@code master} ({@code --replicaof});
         * {@link #start()} then waits for {@code master_link_status:up}.
         * @param master a running server
         * @return this builder
         */
        public Builder replicaOf(RedisTestServer master) {
            this.master = Objects.requireNonNull(master, "master");
            return this;
        }

        /**
         * Starts the servers in cluster mode ({@code cluster-enabled yes},
         * {@code nodes.conf} in the server's directory) on a port whose cluster bus port
         * (+10000) is free too. Slots are not assigned: {@link RedisTestCluster} does
         * that.
         * @return this builder
         */
        public Builder clusterEnabled() {
            this.clusterEnabled = true;
            return this;
        }

        /**
         * Makes the servers speak TLS only: {@code port 0} (no plain-text port),
         * {@code tls-port} on the free port that {@link RedisTestServer#port()} reports,
         * the given certificate and key, and {@code tls-auth-clients no}, so clients need
         * to trust the CA but bring no certificate of their own. The fixture's own
         * connections ({@link RedisTestServer#command(String...)} and the like) use TLS
         * too and verify the host name. Needs a {@code redis-server} built with TLS
         * (Debian's and most distributions' are; the bundled fallback binaries may not
         * be: the server then fails to start with an error naming TLS).
         * @param certificates e.g. {@link TlsCertificates#generate()}
         * @return this builder
         * @throws IllegalStateException when combined with {@link #clusterEnabled()} or
         * {@link #replicaOf}, which the fixture does not support over TLS
         */
        public Builder tls(TlsCertificates certificates) {
            this.tls = Objects.requireNonNull(certificates, "certificates");
            return this;
        }

        /**
         * Makes the servers require a password of every client ({@code requirepass}, the
         * default user's password): a client that sends none gets {@code NOAUTH}, one
         * that sends another gets {@code WRONGPASS}. The fixture's own connections
         * ({@link RedisTestServer#command(String...)} and the like) authenticate.
         * @param requiredPassword the default user's password, not blank
         * @return this builder
         */
        public Builder password(String requiredPassword) {
            if (requiredPassword == null || requiredPassword.isBlank()) {
                throw new IllegalArgumentException("the password must not be blank, was '" + requiredPassword + "'");
            }
            this.password = requiredPassword;
            return this;
        }

        /**
         * Runs the servers as Sentinels ({@code --sentinel}) with these lines appended to
         * the generated config file, e.g.
         * {@code sentinel monitor mymaster 127.0.0.1 41234 2}. Package-private: tests use
         * {@link RedisTestSentinelGroup}, which knows which lines make a group that fails
         * over quickly.
         */
        Builder sentinel(List<String> configLines) {
            this.sentinelConfig = List.copyOf(configLines);
            return this;
        }

        /**
         * Runs the servers under libfaketime, so that a test can step their wall clock
         * while they run with {@link RedisTestServer#jumpClock(Duration)}; each server
         * has its own clock, starting at real time. Linux only, and needs Debian's
         * {@code libfaketime} package (or {@code -Dfaketime.library=...}): without it,
         * {@link #start()} skips the test with the reason, or fails it on CI
         * ({@code CI=true}). A statically linked {@code redis-server}, which would ignore
         * libfaketime, fails to start with a {@link RedisStartupException} that says so.
         *
         * <pre>{@code
         * try (RedisTestServer redis = RedisTestServer.builder().withFakeClock().start()) {
         *     redis.jumpClock(Duration.ofMinutes(1));
         * }
         * }</pre>
         * @return this builder
         */
        public Builder withFakeClock() {
            this.fakeClock = true;
            return this;
        }

        /**
         * Runs {@code action} every time a server has started and answers PING, also
         * after {@link #restart()}: for settings that a process forgets when it exits,
         * such as {@code SENTINEL DEBUG} timings.
         */
        Builder afterStart(Consumer<RedisTestServer> action) {
            this.afterStart = Objects.requireNonNull(action, "action");
            return this;
        }

        /**
         * How long to wait for a new process to answer PING (and a replica's link to come
         * up); 10 s by default.
         * @param timeout the startup timeout
         * @return this builder
         */
        public Builder startupTimeout(Duration timeout) {
            this.startupTimeout = requirePositive(timeout);
            return this;
        }

        /**
         * Connect and read timeout of {@link RedisTestServer#command(String...)} and the
         * typed helpers; 5 s by default, so that a paused server fails a test instead of
         * hanging it.
         * @param timeout the command timeout
         * @return this builder
         */
        public Builder commandTimeout(Duration timeout) {
            this.commandTimeout = requirePositive(timeout);
            return this;
        }

        /**
         * Starts one server on a free port and waits until it answers PING. A port taken
         * by another process in the meantime is detected and another one tried.
         * @return the running server; close it when done
         * @throws RedisStartupException when it does not start; the message includes the
         * log tail
         */
        public RedisTestServer start() {
            if (password != null && (sentinelConfig != null || clusterEnabled || master != null)) {
                throw new IllegalStateException("password() is supported for standalone masters only");
            }
            if (sentinelConfig != null && (clusterEnabled || master != null || tls != null)) {
                throw new IllegalStateException("a Sentinel cannot also be a cluster node, a replica or a TLS server");
            }
            if (tls != null && (clusterEnabled || master != null)) {
                throw new IllegalStateException("TLS is supported for standalone masters only, not with "
                        + (clusterEnabled ? "clusterEnabled()" : "replicaOf()"));
            }
            fakeClockLibrary = fakeClock ? FakeClock.requireLibrary() : null;
            RedisTestServer server = new RedisTestServer(this);
            try {
                server.startOnFreePort();
                return server;
            }
            catch (RuntimeException e) {
                server.close();
                throw e;
            }
        }

        /**
         * Starts {@code count} independent servers with this configuration, on distinct
         * ports. If one fails, the ones already started are closed.
         * @param count how many, at least 1
         * @return the running servers in start order
         */
        public List<RedisTestServer> startMany(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("count must be at least 1, was " + count);
            }
            List<RedisTestServer> servers = new ArrayList<>(count);
            try {
                for (int i = 0; i < count; i++) {
                    servers.add(start());
                }
                return Collections.unmodifiableList(servers);
            }
            catch (RuntimeException e) {
                servers.forEach(RedisTestServer::close);
                throw e;
            }
        }

        private static Duration requirePositive(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, was " + timeout);
            }
            return timeout;
        }

    }

}
