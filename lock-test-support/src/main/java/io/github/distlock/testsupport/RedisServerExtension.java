package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that runs real Redis servers for a test class.
 *
 * <pre>{@code
 * &#64;RegisterExtension
 * static RedisServerExtension redis = new RedisServerExtension();            // one master
 *

 * &#64;RegisterExtension
 * static RedisServerExtension redlock = RedisServerExtension.masters(3);    // three independent masters
 * &#64;RegisterExtension
 * static RedisServerExtension replicated = new RedisServerExtension().withReplica().resetBeforeEach();
 * }</pre>
 *
 * <p>
 * In a {@code static} field the servers start before the first test of the class and are
 * closed after the last one, also when tests fail; {@code @Nested} classes share them. In
 * an instance field each test gets fresh servers, closed after it. Why both: starting
 * Redis takes a few tens of milliseconds, so per-class is the cheap default, while
 * per-test gives full isolation to tests that leave servers killed or reconfigured.
 */
public class RedisServerExtension
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

    private final int masterCount;

    private final RedisTestServer.Builder builder;

    private boolean withReplica;

    private boolean resetBeforeEach;

    private final List<RedisTestServer> masters = new ArrayList<>();

    private RedisTestServer replica;

    /**
     * Unique id of the class context that started the servers (per-class mode), or null.
     */
    private String ownerContextId;

    /** Whether the servers were started for a single test (instance-field mode). */
    private boolean startedForOneTest;

    /** One master with default settings. */
    public RedisServerExtension() {
        this(1, RedisTestServer.builder());
    }

    /**
     * Masters started from a customized builder, e.g.
     * {@code new RedisServerExtension(RedisTestServer.builder().args("--maxmemory", "10mb"))}.
     * @param builder configuration for the master(s)
     */
    public RedisServerExtension(RedisTestServer.Builder builder) {
        this(1, builder);
    }

    private RedisServerExtension(int masterCount, RedisTestServer.Builder builder) {
        if (masterCount < 1) {
            throw new IllegalArgumentException("masterCount must be at least 1, was " + masterCount);
        }
        this.masterCount = masterCount;
        this.builder = Objects.requireNonNull(builder, "builder");
    }

    /**
     * {@code count} independent masters with default settings, e.g. for Redlock quorum
     * tests.
     * @param count how many, at least 1
     * @return the extension
     */
    public static RedisServerExtension masters(int count) {
        return new RedisServerExtension(count, RedisTestServer.builder());
    }

    /**
     * {@code count} independent masters started from a customized builder, e.g.
     * {@code masters(3, RedisTestServer.builder().password("secret"))} for Redlock nodes
     * that require a password.
     * @param count how many, at least 1
     * @param builder configuration for every master
     * @return the extension
     */
    public static RedisServerExtension masters(int count, RedisTestServer.Builder builder) {
        return new RedisServerExtension(count, builder);
    }

    /**
     * Also starts a replica of the first master, available as {@link #replica()}.
     * @return this extension
     */
    public RedisServerExtension withReplica() {
        this.withReplica = true;
        return this;
    }

    /**
     * Before each test: resumes paused servers, restarts killed or stopped ones on their
     * ports, runs {@code FLUSHALL} and {@code CONFIG RESETSTAT}. Lets fault-injection
     * tests share per-class servers without leaking state into the next test.
     * @return this extension
     */
    public RedisServerExtension resetBeforeEach() {
        this.resetBeforeEach = true;
        return this;
    }

    // ------------------------------------------------------------------------------------------------
    // callbacks

    /**
     * Starts the servers for the class (static field); a {@code @Nested} class reuses the
     * outer class's servers.
     * @param context the class context
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        if (!isStarted()) {
            startServers();
            ownerContextId = context.getUniqueId();
        }
    }

    /**
     * Closes the servers once the class that started them is done, whatever the test
     * outcome.
     * @param context the class context
     */
    @Override
    public void afterAll(ExtensionContext context) {
        if (context.getUniqueId().equals(ownerContextId)) {
            ownerContextId = null;
            closeServers();
        }
    }

    /**
     * Starts fresh servers if none run (instance field), otherwise applies
     * {@link #resetBeforeEach()} if asked.
     * @param context the test context
     */
    @Override
    public void beforeEach(ExtensionContext context) {
        if (!isStarted()) {
            startServers();
            startedForOneTest = true;
        }
        else if (resetBeforeEach) {
            reset();
        }
    }

    /**
     * Closes servers that were started for this test only.
     * @param context the test context
     */
    @Override
    public void afterEach(ExtensionContext context) {
        if (startedForOneTest) {
            startedForOneTest = false;
            closeServers();
        }
    }

    // ------------------------------------------------------------------------------------------------
    // accessors

    /**
     * The (first) master.
     * @return the running server
     * @throws IllegalStateException outside the extension's lifecycle
     */
    public RedisTestServer server() {
        return server(0);
    }

    /**
     * One of the masters.
     * @param index 0-based, below the number of masters
     * @return the server
     * @throws IllegalStateException outside the extension's lifecycle
     */
    public RedisTestServer server(int index) {
        requireStarted();
        return masters.get(index);
    }

    /**
     * All masters, in start order.
     * @return an unmodifiable list
     * @throws IllegalStateException outside the extension's lifecycle
     */
    public List<RedisTestServer> servers() {
        requireStarted();
        return List.copyOf(masters);
    }

    /**
     * The replica of the first master.
     * @return the replica
     * @throws IllegalStateException when {@link #withReplica()} was not requested, or
     * outside the lifecycle
     */
    public RedisTestServer replica() {
        requireStarted();
        if (replica == null) {
            throw new IllegalStateException("no replica: register the extension with withReplica()");
        }
        return replica;
    }

    /**
     * Host of the first master.
     * @return {@value RedisTestServer#HOST}
     */
    public String host() {
        return server().host();
    }

    /**
     * Port of the first master.
     * @return the port
     */
    public int port() {
        return server().port();
    }

    /**
     * URI of the first master, e.g. for {@code spring.data.redis.url}.
     * @return {@code redis://127.0.0.1:PORT}
     */
    public String redisUri() {
        return server().redisUri();
    }

    /**
     * URIs of all masters, in start order.
     * @return one {@code redis://127.0.0.1:PORT} per master
     */
    public List<String> redisUris() {
        return servers().stream().map(RedisTestServer::redisUri).collect(Collectors.toList());
    }

    // ------------------------------------------------------------------------------------------------
    // internals

    private boolean isStarted() {
        return !masters.isEmpty();
    }

    private void requireStarted() {
        if (!isStarted()) {
            throw new IllegalStateException("Redis servers are not running: they exist between beforeAll/afterAll "
                    + "(static @RegisterExtension field) or beforeEach/afterEach (instance field)");
        }
    }

    private void startServers() {
        try {
            masters.addAll(builder.startMany(masterCount));
            if (withReplica) {
                replica = RedisTestServer.startReplicaOf(masters.get(0));
            }
        }
        catch (RuntimeException e) {
            closeServers();
            throw e;
        }
    }

    private void closeServers() {
        if (replica != null) {
            replica.close();
            replica = null;
        }
        masters.forEach(RedisTestServer::close);
        masters.clear();
    }

    private void reset() {
        List<RedisTestServer> all = new ArrayList<>(masters);
        if (replica != null) {
            all.add(replica);
        }
        for (RedisTestServer server : all) {
            server.resume();
            if (!server.isRunning()) {
                server.restart();
            }
        }
        for (RedisTestServer server : masters) {
            server.flushAll();
            server.resetStats();
        }
        if (replica != null) {
            replica.awaitMasterLinkUp(Duration.ofSeconds(10));
            replica.resetStats();
        }
    }

}
