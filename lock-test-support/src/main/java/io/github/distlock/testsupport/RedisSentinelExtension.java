package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that runs a {@link RedisTestSentinelGroup} (a master, a replica and
 * three Sentinels) for a test class:
 *
 * <pre>{@code
 * &#64;RegisterExtension
 * static RedisSentinelExtension sentinel = new RedisSentinelExtension().resetBeforeEach();
 * &#64;Test
 * void lockSurvivesAFailover() {
 *     RedisURI uri = RedisURI.Builder.sentinel("127.0.0.1", sentinel.group().sentinels().get(0).port(),
 *             sentinel.masterName()).build();
 *     ...
 *     sentinel.group().failover();
 * }
 * }</pre>
 *
 * <p>
 * Register it in a {@code static} field: a group takes about a second to settle, too slow
 * to repeat per test. It starts before the first test and is closed after the last, also
 * when tests fail; {@code @Nested} classes share it. Failovers move the master around, so
 * tests should ask {@link #master()} rather than remember a node.
 */
public class RedisSentinelExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

    private static final Duration RESET_TIMEOUT = Duration.ofSeconds(40);

    private final RedisTestSentinelGroup.Builder builder;

    private boolean resetBeforeEach;

    private RedisTestSentinelGroup group;

    private String ownerContextId;

    /** A group with the defaults of {@link RedisTestSentinelGroup#start()}. */
    public RedisSentinelExtension() {
        this(RedisTestSentinelGroup.builder());
    }

    /**
     * A group from a customized builder, e.g.
     * {@code new RedisSentinelExtension(RedisTestSentinelGroup.builder().replicas(2))}.
     * @param builder configuration of the group
     */
    public RedisSentinelExtension(RedisTestSentinelGroup.Builder builder) {
        this.builder = Objects.requireNonNull(builder, "builder");
    }

    /**
     * Before each test: resumes paused processes, restarts killed or stopped ones, waits
     * until the group is settled ({@link RedisTestSentinelGroup#awaitSettled}) and runs
     * {@code FLUSHALL} on the master. The master stays wherever earlier failovers moved
     * it. Lets fault-injection tests share one group without leaking state.
     *
     * <pre>{@code
     * &#64;RegisterExtension
     * static RedisSentinelExtension sentinel = new RedisSentinelExtension().resetBeforeEach();
     * }</pre>
     * @return this extension
     */
    public RedisSentinelExtension resetBeforeEach() {
        this.resetBeforeEach = true;
        return this;
    }

    // ------------------------------------------------------------------------------------------------
    // callbacks

    /**
     * Starts the group unless an outer class already did.
     * @param context the class context
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        if (group == null) {
            group = builder.start();
            ownerContextId = context.getUniqueId();
        }
    }

    /**
     * Closes the group once the class that started it is done.
     * @param context the class context
     */
    @Override
    public void afterAll(ExtensionContext context) {
        if (group != null && context.getUniqueId().equals(ownerContextId)) {
            group.close();
            group = null;
            ownerContextId = null;
        }
    }

    /**
     * Applies {@link #resetBeforeEach()} if asked.
     * @param context the test context
     */
    @Override
    public void beforeEach(ExtensionContext context) {
        if (resetBeforeEach) {
            RedisTestSentinelGroup running = group();
            List<RedisTestServer> all = new ArrayList<>(running.sentinels());
            all.addAll(running.servers());
            for (RedisTestServer process : all) {
                process.resume();
                if (!process.isRunning()) {
                    process.restart();
                }
            }
            running.awaitSettled(RESET_TIMEOUT);
            running.master().flushAll();
        }
    }

    // ------------------------------------------------------------------------------------------------
    // accessors

    /**
     * The running group, for everything beyond the shortcuts below.
     *
     * <pre>{@code
     * RedisTestServer promoted = sentinel.group().failover();
     * }</pre>
     * @return the group
     * @throws IllegalStateException outside beforeAll/afterAll, e.g. when registered in
     * an instance field
     */
    public RedisTestSentinelGroup group() {
        if (group == null) {
            throw new IllegalStateException("the Sentinel group is not running: register RedisSentinelExtension in a "
                    + "static @RegisterExtension field and use it from tests");
        }
        return group;
    }

    /**
     * The name the Sentinels monitor the master under, for
     * {@code spring.data.redis.sentinel.master}.
     *
     * <pre>{@code
     * registry.add("spring.data.redis.sentinel.master", sentinel::masterName);
     * }</pre>
     * @return e.g. {@value RedisTestSentinelGroup#DEFAULT_MASTER_NAME}
     */
    public String masterName() {
        return group().masterName();
    }

    /**
     * {@code host:port} of every Sentinel, for {@code spring.data.redis.sentinel.nodes}.
     *
     * <pre>{@code
     * registry.add("spring.data.redis.sentinel.nodes", () -> String.join(",", sentinel.sentinelHostAndPorts()));
     * }</pre>
     * @return one {@code 127.0.0.1:PORT} per Sentinel
     */
    public List<String> sentinelHostAndPorts() {
        return group().sentinelHostAndPorts();
    }

    /**
     * The current master, as the Sentinels report it.
     *
     * <pre>{@code
     * assertThat(sentinel.master().get("lock:{order-42}")).isNotNull();
     * }</pre>
     * @return the master
     */
    public RedisTestServer master() {
        return group().master();
    }

}
