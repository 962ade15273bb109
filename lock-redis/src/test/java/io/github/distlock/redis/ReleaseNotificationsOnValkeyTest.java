package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.redis.RedisHandOverNotifications.Mode;
import io.github.distlock.testsupport.RedisServerBinary;
import io.github.distlock.testsupport.RedisTestCluster;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.ServerKind;

/**
 * Release notifications on a real Valkey Cluster (a {@code valkey-server} from
 * {@code valkey.server.bin}, {@code VALKEY_SERVER_BIN} or the {@code PATH}; skipped
 * without one, failed on CI). Valkey reports {@code redis_version:7.2.4} whatever its own
 * version, so the choice must come from what the nodes have: they are asked for
 * {@code SPUBLISH}, and where an ACL forbids asking, {@code valkey_version} decides.
 * Either way the log names the server as "Valkey 9.1.2", and a release announces its
 * hand-over on the lock's shard.
 *
 * <p>
 * Tagged {@code valkey}: {@code .ci/run} leaves it out of the main build (the Valkey
 * binary may still be building then) and runs it in the Valkey leg.
 */
@Tag("valkey")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReleaseNotificationsOnValkeyTest {

    private static final String PREFIX = "lock:";

    private static final String GLOBAL_CHANNEL = RedisReleaseSubscriber.releaseChannel(PREFIX);

    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    private static final String USER = "no-command";

    private static final String PASSWORD = "no-command-password";

    private RedisTestCluster cluster;

    private String valkeyVersion;

    private final ListAppender<ILoggingEvent> log = new ListAppender<>();

    private final Logger logger = (Logger) LoggerFactory.getLogger(ReleaseNotifications.class);

    /**
     * Started by the first test, so that without Valkey each test reports itself skipped,
     * with the reason.
     */
    private void startValkeyCluster() {
        if (cluster != null) {
            return;
        }
        cluster = RedisTestCluster.start(3, RedisServerBinary.requireValkey());
        valkeyVersion = cluster.node(0).infoValue("server", "valkey_version");
        for (RedisTestServer node : cluster.nodes()) {
            // Everything but COMMAND: the lock commands, pub/sub and INFO still work.
            node.command("ACL", "SETUSER", USER, "reset", "on", ">" + PASSWORD, "~*", "&*", "+@all", "-command");
        }
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void valkeyClusterAndLogCapture() {
        startValkeyCluster();
        log.list.clear();
        log.start();
        logger.addAppender(log);
    }

    @AfterEach
    void stopCapturing() {
        logger.detachAppender(log);
    }

    @Test
    void theNodesRunValkeyWhileReportingRedis724ForCompatibility() {
        RedisTestServer node = cluster.node(0);

        assertThat(node.serverKind()).isEqualTo(ServerKind.VALKEY);
        assertThat(valkeyVersion).isNotBlank();
        assertThat(node.serverName()).isEqualTo("Valkey " + valkeyVersion);
        assertThat(node.infoValue("server", "redis_version")).isEqualTo("7.2.4");
    }

    @Test
    void theNodesAreAskedForSpublishAndTheLogNamesValkeyByItsOwnVersion() throws Exception {
        cluster.nodes().forEach(RedisTestServer::resetStats);
        try (Instance instance = new Instance(null, null)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> instance.notifications.mode() != null);

            assertThat(instance.notifications.mode()).isEqualTo(Mode.SHARDED);
            assertThat(cluster.nodes()).allSatisfy(
                    node -> assertThat(node.commandCalls("command|info")).as("COMMAND INFO on %s", node).isEqualTo(1));
            assertThat(infoLines()).singleElement(InstanceOfAssertFactories.STRING)
                .contains("sharded pub/sub")
                .endsWith(" on Cluster of Valkey " + valkeyVersion)
                .doesNotContain("7.2.4");
        }
    }

    @Test
    void whereAnAclForbidsCommandInfoValkeyVersionDecides() throws Exception {
        cluster.nodes().forEach(RedisTestServer::resetStats);
        try (Instance instance = new Instance(USER, PASSWORD)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> instance.notifications.mode() != null);

            assertThat(instance.notifications.mode()).isEqualTo(Mode.SHARDED);
            assertThat(cluster.nodes().stream().mapToLong(node -> node.errorReplies("NOPERM")).sum())
                .as("COMMAND INFO refused on every node")
                .isEqualTo(3);
            assertThat(infoLines()).singleElement(InstanceOfAssertFactories.STRING)
                .endsWith(" on Cluster of Valkey " + valkeyVersion);
        }
    }

    @Test
    void aReleaseAnnouncesTheHandOverWithSpublishOnTheLocksShard() throws Exception {
        try (Instance instance = new Instance(null, null)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> instance.notifications.mode() == Mode.SHARDED);
            RedisLockBackend backend = new RedisLockBackend(instance.connectionFactory, TIMEOUT, PREFIX,
                    instance.notifications, ReplicaAcks.NONE);
            try {
                LockKey key = RedisKeyNaming.lockKey(PREFIX, "valkey:1");
                RedisTestServer owner = cluster.nodeForKey(key.storeKey());
                assertThat(backend.tryAcquire(key, "holder-token", 30_000, 0, false, false).acquired()).isTrue();
                assertThat(backend.tryAcquire(key, "waiter-token", 30_000, 10_000, false, false).acquired()).isFalse();
                owner.resetStats();

                assertThat(backend.release(key, "holder-token")).isTrue();

                assertThat(owner.get(key.storeKey())).as("handed over").isEqualTo("waiter-token");
                assertThat(owner.commandCalls("spublish")).as("announced on the shard").isEqualTo(1);
                assertThat(owner.commandCalls("publish")).as("not on the global channel").isZero();
                assertThat(backend.release(key, "waiter-token")).isTrue();
            }
            finally {
                backend.close();
            }
        }
    }

    private List<String> infoLines() {
        return log.list.stream()
            .map(ILoggingEvent::getFormattedMessage)
            .filter(message -> message.startsWith("Lock release notifications:"))
            .toList();
    }

    /**
     * What an application wires for release notifications over a Lettuce Cluster
     * connection factory.
     */
    private final class Instance implements AutoCloseable {

        final LettuceConnectionFactory connectionFactory;

        final RedisReleaseSubscriber subscriber;

        final ReleaseNotifications notifications;

        Instance(String user, String password) {
            RedisClusterConfiguration configuration = new RedisClusterConfiguration(cluster.hostAndPorts());
            if (user != null) {
                configuration.setUsername(user);
                configuration.setPassword(RedisPassword.of(password));
            }
            connectionFactory = new LettuceConnectionFactory(configuration);
            connectionFactory.afterPropertiesSet();
            connectionFactory.start();
            LockWaiters waiters = new LockWaiters();
            subscriber = new RedisReleaseSubscriber(connectionFactory, GLOBAL_CHANNEL, waiters);
            notifications = new ReleaseNotifications(connectionFactory, PREFIX, true, subscriber, waiters, TIMEOUT);
        }

        @Override
        public void close() throws Exception {
            notifications.close();
            subscriber.close();
            connectionFactory.destroy();
        }

    }

}
