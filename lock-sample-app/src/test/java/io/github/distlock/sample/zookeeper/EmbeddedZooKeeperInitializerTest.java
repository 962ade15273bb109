package io.github.distlock.sample.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.github.distlock.sample.redis.EmbeddedRedis;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.MapPropertySource;

/**
 * When the sample starts its own ZooKeeper, that it serves, and that it is gone with the
 * context, data and all.
 */
class EmbeddedZooKeeperInitializerTest {

    /** Patient, as a busy machine can take long to answer. */
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    @Test
    void startsAZooKeeperThatServesWhenNoConnectStringIsSetAndStopsItAndDeletesItsDataWithTheContext()
            throws Exception {
        GenericApplicationContext context = context(Map.of());

        new EmbeddedZooKeeperInitializer().initialize(context);
        context.refresh();

        String connectString = context.getEnvironment()
            .getRequiredProperty(EmbeddedZooKeeperInitializer.CONNECT_STRING_PROPERTY);
        assertThat(connectString).startsWith(EmbeddedZooKeeper.HOST + ":");
        EmbeddedZooKeeper zooKeeper = context.getBean(EmbeddedZooKeeper.class);
        assertThat(connectString).isEqualTo(zooKeeper.connectString());
        Path directory = zooKeeper.directory();
        try (CuratorFramework client = CuratorFrameworkFactory.newClient(connectString, new RetryOneTime(100))) {
            client.start();
            assertThat(client.blockUntilConnected((int) PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
            client.create().forPath("/written", "sample".getBytes());
            assertThat(client.getData().forPath("/written")).asString().isEqualTo("sample");
        }
        assertThat(directory).isDirectory();

        context.close();

        await().atMost(PATIENCE)
            .untilAsserted(() -> assertThat(
                    EmbeddedRedis.answers(EmbeddedZooKeeper.HOST, zooKeeper.port(), Duration.ofSeconds(1)))
                .as("the port answers after close")
                .isFalse());
        assertThat(Files.exists(directory)).as("the data directory after close").isFalse();
    }

    @Test
    void aConfiguredConnectStringStartsNothing() {
        GenericApplicationContext context = context(
                Map.of(EmbeddedZooKeeperInitializer.CONNECT_STRING_PROPERTY, "zk1:2181,zk2:2181"));

        new EmbeddedZooKeeperInitializer().initialize(context);

        assertThat(context.getEnvironment().getProperty(EmbeddedZooKeeperInitializer.CONNECT_STRING_PROPERTY))
            .isEqualTo("zk1:2181,zk2:2181");
        assertThat(context.getBeanFactory().containsSingleton("sampleEmbeddedZooKeeper")).isFalse();
    }

    @Test
    void turnedOffItStartsNothingAndLeavesTheConnectStringUnset() {
        GenericApplicationContext context = context(Map.of(EmbeddedZooKeeperInitializer.ENABLED_PROPERTY, "false"));

        new EmbeddedZooKeeperInitializer().initialize(context);

        assertThat(context.getEnvironment().containsProperty(EmbeddedZooKeeperInitializer.CONNECT_STRING_PROPERTY))
            .isFalse();
        assertThat(context.getBeanFactory().containsSingleton("sampleEmbeddedZooKeeper")).isFalse();
    }

    @Test
    void anInvalidSwitchNamesThePropertyAndTheValues() {
        GenericApplicationContext context = context(Map.of(EmbeddedZooKeeperInitializer.ENABLED_PROPERTY, "sometimes"));

        assertThatThrownBy(() -> new EmbeddedZooKeeperInitializer().initialize(context))
            .hasMessageContaining(EmbeddedZooKeeperInitializer.ENABLED_PROPERTY)
            .hasMessageContaining("'sometimes'")
            .hasMessageContaining("true (the default) or false");
    }

    private static GenericApplicationContext context(Map<String, Object> properties) {
        GenericApplicationContext context = new GenericApplicationContext();
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", properties));
        return context;
    }

}
