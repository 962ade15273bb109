package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The JUnit extension, both as used in a test class and driven callback by callback. */
class RedisServerExtensionTest {

    @RegisterExtension
    static RedisServerExtension redis = RedisServerExtension.masters(2).withReplica();

    @Test
    void serversRunDuringTheTestsOfTheClass() {
        assertThat(redis.servers()).hasSize(2).allSatisfy(server -> assertThat(server.ping()).isEqualTo("PONG"));
        assertThat(redis.server()).isSameAs(redis.server(0));
        assertThat(redis.redisUris()).containsExactly(redis.server(0).redisUri(), redis.server(1).redisUri());
        assertThat(redis.redisUri()).isEqualTo("redis://" + redis.host() + ":" + redis.port());
    }

    @Test
    void replicaFollowsTheFirstMaster() {
        redis.server().set("replicated", "yes");

        await().atMost(Duration.ofSeconds(20))
            .untilAsserted(() -> assertThat(redis.replica().get("replicated")).isEqualTo("yes"));
    }

    @Nested
    class NestedClass {

        @Test
        void sharesTheServersOfTheOuterClass() {
            assertThat(redis.server().isRunning()).isTrue();
            assertThat(redis.servers()).hasSize(2);
        }

    }

    @Test
    void classLevelServersAreClosedAfterAllEvenWhenANestedClassFinishedFirst() {
        RedisServerExtension extension = new RedisServerExtension();
        ExtensionContext outer = context("[class:Outer]");
        ExtensionContext nested = context("[class:Outer]/[nested-class:Inner]");

        extension.beforeAll(outer);
        RedisTestServer server = extension.server();
        extension.beforeAll(nested);
        assertThat(extension.server()).as("nested classes reuse the server").isSameAs(server);
        extension.afterAll(nested);
        assertThat(server.isRunning()).as("still needed by the outer class").isTrue();

        extension.afterAll(outer);

        assertThat(server.isRunning()).isFalse();
        assertThat(ProcessHandle.of(server.pid())).isEmpty();
        assertThatThrownBy(extension::server).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void instanceFieldModeGivesEachTestFreshServers() {
        RedisServerExtension extension = new RedisServerExtension();
        ExtensionContext test = context("[class:C]/[method:m()]");

        extension.beforeEach(test);
        RedisTestServer first = extension.server();
        extension.afterEach(test);
        extension.beforeEach(test);
        RedisTestServer second = extension.server();
        extension.afterEach(test);

        assertThat(second).isNotSameAs(first);
        assertThat(first.isRunning()).isFalse();
        assertThat(second.isRunning()).isFalse();
    }

    @Test
    void resetBeforeEachRevivesKilledAndPausedServersAndClearsData() {
        RedisServerExtension extension = RedisServerExtension.masters(2).resetBeforeEach();
        ExtensionContext cls = context("[class:C]");
        extension.beforeAll(cls);
        try {
            extension.server(0).set("left-over", "1");
            extension.server(0).kill();
            extension.server(1).pause();

            extension.beforeEach(context("[class:C]/[method:next()]"));

            assertThat(extension.servers()).allSatisfy(server -> {
                assertThat(server.isRunning()).isTrue();
                assertThat(server.isPaused()).isFalse();
                assertThat(server.dbSize()).isZero();
            });
        }
        finally {
            extension.afterAll(cls);
        }
    }

    @Test
    void accessorsOutsideTheLifecycleExplainWhy() {
        RedisServerExtension extension = new RedisServerExtension();

        assertThatThrownBy(extension::redisUri).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("@RegisterExtension");
        assertThat(List.of(extension)).hasSize(1);
    }

    /**
     * A stand-in for JUnit's context: the extension only needs the unique id to know who
     * started it.
     */
    private static ExtensionContext context(String uniqueId) {
        return (ExtensionContext) Proxy.newProxyInstance(RedisServerExtensionTest.class.getClassLoader(),
                new Class<?>[] { ExtensionContext.class }, (proxy, method, args) -> {
                    if (method.getName().equals("getUniqueId")) {
                        return uniqueId;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

}
