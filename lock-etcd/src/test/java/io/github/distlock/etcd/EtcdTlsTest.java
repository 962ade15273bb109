package io.github.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.github.distlock.LockHandle;
import io.github.distlock.testsupport.EtcdTestCluster;
import io.github.distlock.testsupport.TlsCertificates;

/**
 * The etcd backend over TLS, against a member that serves its client URL with a
 * certificate of a throw-away CA: trusted through
 * {@code distributed-lock.etcd.trust-certificates} it locks; not trusted, the connect
 * fails at startup naming the property. Members that ask clients for a certificate
 * ({@code --client-cert-auth}) take a client with
 * {@code distributed-lock.etcd.client-certificate} and {@code client-key}, and refuse one
 * without.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EtcdTlsTest {

    private TlsCertificates certificates;

    private EtcdTestCluster etcd;

    @BeforeAll
    void start() {
        certificates = TlsCertificates.generate();
        etcd = EtcdTestCluster.start(1, certificates);
    }

    @AfterAll
    void stop() {
        if (etcd != null) {
            etcd.close();
        }
        certificates.close();
    }

    @Test
    void aClientThatTrustsTheMembersCaLocksOverTls() {
        assertThat(etcd.endpoints()).allMatch(endpoint -> endpoint.startsWith("https://"));
        EtcdSettings settings = EtcdSettings.of(etcd.endpoints()).withTrustCertificates(certificates.caCertificate());

        try (EtcdFaultTest.Client client = new EtcdFaultTest.Client(EtcdLockBackend.connect(settings))) {
            LockHandle held = client.locks.lock("over-tls", Duration.ofSeconds(5), Duration.ZERO);
            assertThat(held.fencingToken()).isPositive();
            assertThat(client.locks.tryLock("over-tls", Duration.ofSeconds(5), Duration.ZERO)).isEmpty();
            assertThat(held.release()).isTrue();
        }
    }

    @Test
    void aClientThatDoesNotTrustTheMembersCaFailsTheConnectNamingTheProperty() {
        EtcdSettings untrusted = EtcdSettings.of(etcd.endpoints()).withConnectTimeout(Duration.ofSeconds(3));

        assertThatIllegalStateException().isThrownBy(() -> EtcdLockBackend.connect(untrusted))
            .withMessageContaining("distributed-lock.etcd.endpoints=")
            .withMessageContaining("distributed-lock.etcd.trust-certificates");
    }

    @Test
    void membersThatAskForAClientCertificateLockForAClientThatPresentsOneAndRefuseAClientThatDoesNot() {
        try (EtcdTestCluster strict = EtcdTestCluster.start(1, certificates, true)) {
            EtcdSettings trusted = EtcdSettings.of(strict.endpoints())
                .withTrustCertificates(certificates.caCertificate())
                .withConnectTimeout(Duration.ofSeconds(3));

            assertThatIllegalStateException().isThrownBy(() -> EtcdLockBackend.connect(trusted))
                .withMessageContaining("distributed-lock.etcd.client-certificate");

            EtcdSettings withCertificate = trusted.withClientCertificate(certificates.clientCertificate(),
                    certificates.clientKey());
            try (EtcdFaultTest.Client client = new EtcdFaultTest.Client(EtcdLockBackend.connect(withCertificate))) {
                LockHandle held = client.locks.lock("mutual-tls", Duration.ofSeconds(5), Duration.ZERO);
                assertThat(held.fencingToken()).isPositive();
                assertThat(held.release()).isTrue();
            }
        }
    }

    @Test
    void aClientCertificateWithoutItsKeyOrOverPlainHttpIsRefusedNamingThePropertiesAndTheFix() {
        EtcdSettings secure = EtcdSettings.of(etcd.endpoints());
        assertThatIllegalArgumentException()
            .isThrownBy(() -> new EtcdSettings(secure.endpoints(), secure.keyPrefix(), secure.operationTimeout(),
                    secure.connectTimeout(), null, null, null, certificates.clientCertificate(), null))
            .withMessageContaining("distributed-lock.etcd.client-certificate and distributed-lock.etcd.client-key go "
                    + "together, but only client-certificate is set");
        assertThatIllegalArgumentException()
            .isThrownBy(
                    () -> secure.withClientCertificate(certificates.clientCertificate(), Path.of("/nonexistent.key")))
            .withMessageContaining("distributed-lock.etcd.client-key=/nonexistent.key is not a readable file");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> EtcdSettings.of("http://127.0.0.1:2379")
                .withClientCertificate(certificates.clientCertificate(), certificates.clientKey()))
            .withMessageContaining("A client certificate needs TLS");
        // Not a key: the server's certificate in place of the client's key.
        EtcdSettings wrongKey = secure.withTrustCertificates(certificates.caCertificate())
            .withClientCertificate(certificates.clientCertificate(), certificates.caCertificate());
        assertThatIllegalArgumentException().isThrownBy(() -> EtcdLockBackend.connect(wrongKey))
            .withMessageContaining("distributed-lock.etcd.client-key=" + certificates.caCertificate())
            .withMessageContaining("PKCS#8");
    }

    @Test
    void aTrustFileThatIsNotThereIsRefusedNamingThePropertyAndTheFix() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> EtcdSettings.of(etcd.endpoints()).withTrustCertificates(Path.of("/nonexistent/ca.crt")))
            .withMessageContaining(
                    "distributed-lock.etcd.trust-certificates=/nonexistent/ca.crt is not a readable file")
            .withMessageContaining("PEM file of the CA");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> EtcdSettings.of("https://127.0.0.1:2379", "http://127.0.0.1:2380"))
            .withMessageContaining("mixes http:// and https://");
    }

}
