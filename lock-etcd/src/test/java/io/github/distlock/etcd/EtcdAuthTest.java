package io.github.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.github.distlock.LockHandle;
import io.github.distlock.testsupport.EtcdTestCluster;

/**
 * The etcd backend against a member with authentication on (a root user, set up through
 * etcd's JSON gateway): with {@code distributed-lock.etcd.user} and {@code .password} it
 * locks, waits and renews; with a wrong password the connect fails naming them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EtcdAuthTest {

    private EtcdTestCluster etcd;

    @BeforeAll
    void startWithAuthentication() throws Exception {
        etcd = EtcdTestCluster.start(1);
        String endpoint = etcd.endpoint(0);
        post(endpoint, "/v3/auth/role/add", "{\"name\":\"root\"}");
        post(endpoint, "/v3/auth/user/add", "{\"name\":\"root\",\"password\":\"s3cret\"}");
        post(endpoint, "/v3/auth/user/grant", "{\"user\":\"root\",\"role\":\"root\"}");
        post(endpoint, "/v3/auth/enable", "{}");
    }

    @AfterAll
    void stop() {
        etcd.close();
    }

    @Test
    void withTheUsersCredentialsLocksWorkAndTheWatchdogRenews() {
        EtcdSettings settings = EtcdSettings.of(etcd.endpoints()).withCredentials("root", "s3cret");

        try (EtcdFaultTest.Client client = new EtcdFaultTest.Client(EtcdLockBackend.connect(settings))) {
            LockHandle held = client.locks.lock("authenticated", Duration.ofSeconds(2), Duration.ZERO);
            long token = held.fencingToken();
            await().during(Duration.ofSeconds(3))
                .atMost(Duration.ofSeconds(30))
                .until(() -> held.isHeld() && !held.isLost());
            assertThat(token).isPositive();
            assertThat(held.release()).isTrue();
        }
    }

    @Test
    void aWrongPasswordFailsTheConnectNamingTheProperties() {
        EtcdSettings wrong = EtcdSettings.of(etcd.endpoints())
            .withCredentials("root", "wrong")
            .withConnectTimeout(Duration.ofSeconds(3));

        assertThatIllegalStateException().isThrownBy(() -> EtcdLockBackend.connect(wrong))
            .withMessageContaining("distributed-lock.etcd.user and .password");
    }

    private static void post(String endpoint, String path, String body) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient()
            .send(HttpRequest.newBuilder(URI.create(endpoint + path))
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("%s answered %s", path, response.body()).isEqualTo(200);
    }

}
