package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A TLS-only server from generated certificates, reached by the fixture over verified
 * TLS.
 */
class TlsServerTest {

    private static TlsCertificates certificates;

    @BeforeAll
    static void generateCertificates() {
        certificates = TlsCertificates.generate();
    }

    @AfterAll
    static void deleteCertificates() {
        certificates.close();
    }

    @Test
    void aTlsServerHasNoPlainTextPortAndTheFixtureTalksToItOverTls() throws IOException {
        try (RedisTestServer redis = RedisTestServer.builder().tls(certificates).start()) {
            assertThat(Files.readString(certificates.caCertificate())).startsWith("-----BEGIN CERTIFICATE-----");
            assertThat(Files.readString(certificates.serverKey())).startsWith("-----BEGIN PRIVATE KEY-----");
            assertThat(redis.usesTls()).isTrue();
            assertThat(redis.redisUri()).isEqualTo("rediss://127.0.0.1:" + redis.port());

            redis.set("k", "v");

            assertThat(redis.get("k")).isEqualTo("v");
            assertThat(((List<?>) redis.command("CONFIG", "GET", "port")).get(1)).isEqualTo("0");
            assertThat(((List<?>) redis.command("CONFIG", "GET", "tls-port")).get(1))
                .isEqualTo(Integer.toString(redis.port()));
            assertThatThrownBy(() -> {
                try (RespConnection plain = RespConnection.open(redis.host(), redis.port(), Duration.ofSeconds(1))) {
                    plain.command("PING");
                }
            }).as("plain text on the TLS port").isInstanceOf(IOException.class);
        }
    }

    @Test
    void tlsIsForStandaloneMastersOnly() {
        assertThatThrownBy(() -> RedisTestServer.builder().tls(certificates).clusterEnabled().start())
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("clusterEnabled()");
    }

}
