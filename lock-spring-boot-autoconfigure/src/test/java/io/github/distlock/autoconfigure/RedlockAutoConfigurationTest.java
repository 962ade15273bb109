package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.distlock.LockService;
import io.github.distlock.core.LockBackend;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.redis.HandOverSubscriber;
import io.github.distlock.redlock.RedlockBackend;
import io.github.distlock.redlock.RedlockReleaseHints;

/**
 * The Redlock conditions and the startup validation of
 * {@code distributed-lock.redlock.*}. No Redis is needed: node clients connect in the
 * background, and nothing here takes a lock.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedlockAutoConfigurationTest {

    private static final String THREE_NODES = "distributed-lock.redlock.nodes=redis://127.0.0.1:1,"
            + "redis://127.0.0.1:2,redis://127.0.0.1:3";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS, DistributedLockAutoConfiguration.class));

    @Test
    void configuredNodesMakeEveryLockARedlockAndNothingOfTheSingleRedisBackendIsWired() {
        runner.withPropertyValues(THREE_NODES).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(LockService.class);
            assertThat(context).getBean(LockBackend.class).isInstanceOf(RedlockBackend.class);
            assertThat(context).doesNotHaveBean(LettuceLockBackend.class).doesNotHaveBean(HandOverSubscriber.class);
            RedlockBackend redlock = context.getBean(RedlockBackend.class);
            assertThat(redlock.quorum()).isEqualTo(2);
            assertThat(redlock.nodeNames()).containsExactly("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3");
        });
    }

    @Test
    void theBackendsReleaseHintsAreWiredForTheLockServicesWaiters() {
        runner.withPropertyValues(THREE_NODES).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(RedlockReleaseHints.class);
            assertThat(context.getBean(RedlockReleaseHints.class))
                .isSameAs(context.getBean(RedlockBackend.class).releaseHints());
        });
    }

    @Test
    void nodesCanBeListedAsAnIndexedListAsInYaml() {
        runner
            .withPropertyValues("distributed-lock.redlock.nodes[0]=redis://127.0.0.1:1",
                    "distributed-lock.redlock.nodes[1]=redis://127.0.0.1:2",
                    "distributed-lock.redlock.nodes[2]=rediss://user:secret@127.0.0.1:3")
            .run(context -> {
                assertThat(context).hasNotFailed().getBean(LockBackend.class).isInstanceOf(RedlockBackend.class);
                assertThat(context.getBean(RedlockBackend.class).nodeNames()).doesNotContain("secret")
                    .allSatisfy(name -> assertThat(name).doesNotContain("secret"));
            });
    }

    @Test
    void withoutNodesTheSingleRedisBackendIsUsed() {
        runner.run(context -> assertThat(context).getBean(LockBackend.class).isInstanceOf(LettuceLockBackend.class));
    }

    @Test
    void redlockNeedsLettuceOnTheClasspath() {
        runner.withPropertyValues(THREE_NODES, "spring.data.redis.client-type=jedis")
            .withClassLoader(new FilteredClassLoader("io.lettuce.core"))
            .run(context -> assertThat(context).getBean(LockBackend.class).isNotInstanceOf(RedlockBackend.class));
    }

    @Test
    void fewerThanThreeNodesFailTheStartupNamingThePropertyTheValueAndTheFix() {
        assertStartupFails("distributed-lock.redlock.nodes=redis://127.0.0.1:1,redis://127.0.0.1:2",
                "distributed-lock.redlock.nodes", "redis://127.0.0.1:1, redis://127.0.0.1:2", "at least 3");
    }

    @Test
    void aNodeListedTwiceFailsTheStartup() {
        assertStartupFails(
                "distributed-lock.redlock.nodes=redis://127.0.0.1:1,redis://127.0.0.1:2," + "redis://127.0.0.1:1",
                "distributed-lock.redlock.nodes", "127.0.0.1:1", "listed twice");
        // The same master through another spelling: upper-case host, default port written
        // out.
        assertStartupFails(
                "distributed-lock.redlock.nodes=redis://LOCALHOST,redis://127.0.0.1:2," + "redis://localhost:6379",
                "distributed-lock.redlock.nodes", "localhost:6379", "listed twice");
    }

    @Test
    void anUnparsableNodeFailsTheStartupNamingIt() {
        assertStartupFails("distributed-lock.redlock.nodes=redis://127.0.0.1:1,127.0.0.1:2,redis://127.0.0.1:3",
                "distributed-lock.redlock.nodes", "127.0.0.1:2", "redis://");
        assertStartupFails("distributed-lock.redlock.nodes=redis://127.0.0.1:1,redis://:2,redis://127.0.0.1:3",
                "distributed-lock.redlock.nodes", "redis://:2", "names no host");
    }

    @Test
    void aDurableNodeThatIsNotANodeFailsTheStartup() {
        assertStartupFails(THREE_NODES, "distributed-lock.redlock.durable-nodes=127.0.0.1:9",
                "distributed-lock.redlock.durable-nodes", "127.0.0.1:9", "is not one of");
        runner.withPropertyValues(THREE_NODES, "distributed-lock.redlock.durable-nodes=127.0.0.1:2,redis://127.0.0.1:3")
            .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void badTimingsFailTheStartup() {
        assertStartupFails(THREE_NODES, "distributed-lock.redlock.node-timeout=0",
                "distributed-lock.redlock.node-timeout", "PT0S", "at least 1ms");
        assertStartupFails(THREE_NODES, "distributed-lock.redlock.drift-factor=0.7",
                "distributed-lock.redlock.drift-factor", "0.7", "below 0.5");
        assertStartupFails(THREE_NODES, "distributed-lock.redlock.retry-delay=0",
                "distributed-lock.redlock.retry-delay", "PT0S", "from 1ms to 1m");
    }

    @Test
    void anEvenNumberOfNodesLogsAWarningExplainingWhyOddIsBetter(CapturedOutput output) {
        runner.withPropertyValues(THREE_NODES + ",redis://127.0.0.1:4").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(output).contains("Redlock runs on 4 nodes, an even number").contains("tolerates 1 failed");
        });
    }

    @Test
    void replicaAcksWithRedlockNodesFailTheStartupRatherThanBeIgnored() {
        assertStartupFails(THREE_NODES, "distributed-lock.replica-acks=1", "distributed-lock.replica-acks", "1",
                "Remove replica-acks, or the Redlock nodes");
    }

    private void assertStartupFails(String property, String name, String value, String fix) {
        assertStartupFails(property, "", name, value, fix);
    }

    private void assertStartupFails(String property, String other, String name, String value, String fix) {
        ApplicationContextRunner configured = other.isEmpty() ? runner.withPropertyValues(property)
                : runner.withPropertyValues(property, other);
        configured.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                .hasMessageContaining(name)
                .hasMessageContaining(value)
                .hasMessageContaining(fix);
        });
    }

}
