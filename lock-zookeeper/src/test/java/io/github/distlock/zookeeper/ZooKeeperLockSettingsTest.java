package io.github.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;

import org.junit.jupiter.api.Test;

/**
 * Bad input fails when the backend is built, with the property, the value and the fix: a
 * malformed connect string, an ensemble nobody answers at, a ttl longer than the session.
 */
class ZooKeeperLockSettingsTest {

    @Test
    void aConnectStringWithoutAPortNamesThePropertyTheValueAndTheExpectedForm() {
        assertThatThrownBy(() -> ZooKeeperLockSettings.of("zk1,zk2:2181")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining(ZooKeeperLockSettings.CONNECT_STRING_PROPERTY)
            .hasMessageContaining("'zk1,zk2:2181'")
            .hasMessageContaining("without a port ('zk1')")
            .hasMessageContaining("zk1:2181,zk2:2181,zk3:2181");
    }

    @Test
    void aConnectStringWithABadPortOrNothingInItIsRefused() {
        assertThatThrownBy(() -> ZooKeeperLockSettings.of("zk1:21x81")).hasMessageContaining("not a number");
        assertThatThrownBy(() -> ZooKeeperLockSettings.of("zk1:70000")).hasMessageContaining("out of range");
        assertThatThrownBy(() -> ZooKeeperLockSettings.of(" ")).hasMessageContaining("is empty");
        assertThat(ZooKeeperLockSettings.of("zk1:2181, zk2:2181/apps").connectString())
            .isEqualTo("zk1:2181, zk2:2181/apps");
    }

    @Test
    void durationsMustBePositiveAndTheRootPathAbsolute() {
        assertThatThrownBy(() -> ZooKeeperLockSettings.of("zk:2181").withSessionTimeout(Duration.ZERO))
            .hasMessageContaining(ZooKeeperLockSettings.SESSION_TIMEOUT_PROPERTY)
            .hasMessageContaining("must be positive");
        assertThatThrownBy(() -> ZooKeeperLockSettings.of("zk:2181").withRootPath("locks/"))
            .hasMessageContaining(ZooKeeperLockSettings.ROOT_PATH_PROPERTY)
            .hasMessageContaining("'locks/'");
    }

    @Test
    void aDefaultTtlLongerThanTheSessionNamesBothPropertiesAndTheFix() {
        ZooKeeperLockSettings settings = ZooKeeperLockSettings.of("zk:2181").withSessionTimeout(Duration.ofSeconds(20));

        assertThatThrownBy(
                () -> settings.requireTtlWithinSession(Duration.ofSeconds(30), "distributed-lock.default-ttl"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("distributed-lock.default-ttl (PT30S) is longer than "
                    + ZooKeeperLockSettings.SESSION_TIMEOUT_PROPERTY + " (PT20S)")
            .hasMessageContaining("Raise " + ZooKeeperLockSettings.SESSION_TIMEOUT_PROPERTY + " to at least PT30S");
        settings.requireTtlWithinSession(Duration.ofSeconds(20), "distributed-lock.default-ttl");
    }

    @Test
    void anEnsembleNobodyAnswersAtFailsTheStartNamingTheConnectStringAndTheFix() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            port = socket.getLocalPort();
        }
        ZooKeeperLockSettings settings = ZooKeeperLockSettings.of("127.0.0.1:" + port)
            .withConnectionTimeout(Duration.ofSeconds(1));

        assertThatThrownBy(() -> ZooKeeperLockBackend.connect(settings)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("'127.0.0.1:" + port + "'")
            .hasMessageContaining(ZooKeeperLockSettings.CONNECT_STRING_PROPERTY)
            .hasMessageContaining("within PT1S")
            .hasMessageContaining("clientPort");
    }

    @Test
    void thePropertiesDefaultToTheSettingsDefaults() {
        ZooKeeperLockProperties properties = new ZooKeeperLockProperties();
        properties.setConnectString("zk:2181");

        assertThat(properties.toSettings()).isEqualTo(ZooKeeperLockSettings.of("zk:2181"));
    }

    @Test
    void lockNamesStayReadableInThePathAndOnlyWhatZooKeeperRefusesIsEscaped() {
        assertThat(ZooKeeperLockBackend.encode("order:42")).isEqualTo("order:42");
        assertThat(ZooKeeperLockBackend.encode("tenant/7 job")).isEqualTo("tenant%2F7 job");
        assertThat(ZooKeeperLockBackend.encode("100%")).isEqualTo("100%25");
        assertThat(ZooKeeperLockBackend.encode("..")).isEqualTo("%2E%2E");
        assertThat(ZooKeeperLockBackend.encode("tab\there")).isEqualTo("tab%09here");
        assertThat(ZooKeeperLockBackend.encode("caf\u00e9")).isEqualTo("caf\u00e9");
    }

}
