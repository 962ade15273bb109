package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.TlsCertificates;

/**
 * The lock over TLS, configured the Spring Boot way: {@code spring.data.redis.ssl.bundle}
 * naming a PEM bundle ({@code spring.ssl.bundle.pem.*}) that trusts the test CA. The
 * server has no plain-text port, so every lock command, the watchdog's renewals and the
 * release subscription can only have gone over TLS.
 */
class RedisTlsTest {

    private static TlsCertificates certificates;

    private static RedisTestServer redis;

    @BeforeAll
    static void startTlsServer() {
        certificates = TlsCertificates.generate();
        redis = RedisTestServer.builder().tls(certificates).start();
    }

    @AfterAll
    static void stopTlsServer() {
        if (redis != null) {
            redis.close();
        }
        if (certificates != null) {
            certificates.close();
        }
    }

    @Test
    void theWholeLifecycleRunsOverTlsWithAnSslBundle() throws Exception {
        assertThat(((List<?>) redis.command("CONFIG", "GET", "port")).get(1)).as("plain-text port").isEqualTo("0");
        String[] properties = { "spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
                "spring.data.redis.ssl.enabled=true", "spring.data.redis.ssl.bundle=redis",
                "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + certificates.caCertificate() };

        try (LockApplication first = LockApplication.start(properties);
                LockApplication second = LockApplication.start(properties)) {
            LockLifecycle.run("tls", first.lockService(), second.lockService(), redis);

            assertThat((List<?>) redis.command("PUBSUB", "CHANNELS", "lock:*"))
                .as("the waiting instance subscribed over TLS")
                .isNotEmpty();
        }
    }

    @Test
    void aClientThatDoesNotTrustTheServersCertificateGetsNoLock() {
        // TLS on, but no bundle: only the JDK's default CAs are trusted, and the test CA
        // is not one of them.
        try (LockApplication app = LockApplication.start("spring.data.redis.host=" + redis.host(),
                "spring.data.redis.port=" + redis.port(), "spring.data.redis.ssl.enabled=true")) {
            assertThatThrownBy(() -> app.lockService().tryLock(LockRequest.of("untrusted").withWaitTime(Duration.ZERO)))
                .isInstanceOf(LockBackendException.class)
                .hasStackTraceContaining("SSLHandshakeException")
                .hasStackTraceContaining("PKIX path");
        }
        assertThat(redis.scan("lock:*")).isEmpty();
    }

}
