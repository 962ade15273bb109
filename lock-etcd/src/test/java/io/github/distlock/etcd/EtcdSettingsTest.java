package io.github.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Bad settings fail at startup with a message naming the property, the value and the fix;
 * and the ttl maps to whole-second leases of at least etcd's minimum.
 */
class EtcdSettingsTest {

    @Test
    void anEndpointWithoutSchemeOrPortIsRefusedNamingThePropertyAndTheFix() {
        assertThatIllegalArgumentException().isThrownBy(() -> EtcdSettings.of("etcd-1:2379"))
            .withMessageContaining("distributed-lock.etcd.endpoints")
            .withMessageContaining("'etcd-1:2379'")
            .withMessageContaining("http://etcd-1:2379");
        assertThatIllegalArgumentException().isThrownBy(() -> EtcdSettings.of("http://etcd-1"))
            .withMessageContaining("'http://etcd-1'")
            .withMessageContaining("port");
        assertThatIllegalArgumentException().isThrownBy(() -> EtcdSettings.of(List.of()))
            .withMessageContaining("distributed-lock.etcd.endpoints is empty");
    }

    @Test
    void thePropertiesDefaultToTheSettingsDefaults() {
        EtcdLockProperties properties = new EtcdLockProperties();
        properties.setEndpoints(List.of("http://127.0.0.1:2379"));

        assertThat(properties.toSettings()).isEqualTo(EtcdSettings.of("http://127.0.0.1:2379"));
    }

    @Test
    void aUserWithoutPasswordAndANonPositiveTimeoutAreRefused() {
        EtcdSettings settings = EtcdSettings.of("http://127.0.0.1:2379");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> new EtcdSettings(settings.endpoints(), settings.keyPrefix(), settings.operationTimeout(),
                    settings.connectTimeout(), "root", null, null, null, null))
            .withMessageContaining("distributed-lock.etcd.user and distributed-lock.etcd.password go together");
        assertThatIllegalArgumentException().isThrownBy(() -> settings.withOperationTimeout(Duration.ZERO))
            .withMessageContaining("distributed-lock.etcd.operation-timeout=PT0S must be positive");
        assertThat(settings.withCredentials("root", "secret").toString()).doesNotContain("secret");
    }

    @Test
    void aTtlBecomesALeaseOfWholeSecondsRoundedUpAndAtLeastEtcdsMinimum() {
        assertThat(EtcdLockBackend.leaseSeconds(1)).isEqualTo(2);
        assertThat(EtcdLockBackend.leaseSeconds(500)).isEqualTo(2);
        assertThat(EtcdLockBackend.leaseSeconds(2_000)).isEqualTo(2);
        assertThat(EtcdLockBackend.leaseSeconds(2_001)).isEqualTo(3);
        assertThat(EtcdLockBackend.leaseSeconds(30_000)).isEqualTo(30);
    }

    @Test
    void lockNamesStayReadableAndASlashCannotReachIntoAnotherLocksDirectory() {
        EtcdKeyLayout layout = new EtcdKeyLayout("distlock/");
        assertThat(layout.directory("order:42")).isEqualTo("distlock/lock/order:42/");
        assertThat(layout.directory("a/b")).isEqualTo("distlock/lock/a%2Fb/");
        assertThat(layout.directory("a%2Fb")).isEqualTo("distlock/lock/a%252Fb/");
        assertThat(layout.acquisitionKey("a", "ff")).isEqualTo("distlock/lock/a/ff");
        assertThat(layout.directory("a/b")).doesNotStartWith(layout.directory("a"));
    }

    @Test
    void anEndpointWhereNoEtcdAnswersFailsTheConnectNamingThePropertyAndTheFix() throws IOException {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        EtcdSettings nothingThere = EtcdSettings.of("http://127.0.0.1:" + port)
            .withConnectTimeout(Duration.ofSeconds(2));

        assertThatIllegalStateException().isThrownBy(() -> EtcdLockBackend.connect(nothingThere))
            .withMessageContaining("distributed-lock.etcd.endpoints=[http://127.0.0.1:" + port + "]")
            .withMessageContaining("distributed-lock.etcd.connect-timeout")
            .withMessageContaining("client URL");
    }

}
