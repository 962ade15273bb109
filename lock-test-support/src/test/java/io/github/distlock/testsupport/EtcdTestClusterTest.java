package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;

/**
 * The etcd fixture against real {@code etcd} processes: a three-member cluster starts,
 * finds its leader, elects another when the leader is killed, takes the old leader back,
 * and a paused member comes back when resumed.
 */
class EtcdTestClusterTest {

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void threeMembersElectALeaderAndElectAnotherWhenItIsKilledAndTakeItBack() throws Exception {
        try (EtcdTestCluster etcd = EtcdTestCluster.start()) {
            assertThat(etcd.size()).isEqualTo(3);
            assertThat(etcd.endpoints()).hasSize(3).allMatch(url -> url.startsWith("http://127.0.0.1:"));
            int leader = etcd.awaitLeader();
            assertThat(put(etcd.endpoint((leader + 1) % 3), "a2V5", "dmFsdWU=")).isTrue();

            etcd.kill(leader);

            assertThat(etcd.isRunning(leader)).isFalse();
            int next = etcd.awaitLeader();
            assertThat(next).isNotEqualTo(leader);
            assertThat(put(etcd.endpoint(next), "a2V5", "dmFsdWUy")).as("a majority still writes").isTrue();

            etcd.restart(leader);

            assertThat(etcd.isRunning(leader)).isTrue();
            assertThat(put(etcd.endpoint(leader), "a2V5", "dmFsdWUz")).as("the restarted member serves again").isTrue();
        }
    }

    @Test
    void aPausedMemberAnswersNothingUntilResumed() throws Exception {
        try (EtcdTestCluster etcd = EtcdTestCluster.start()) {
            int leader = etcd.awaitLeader();
            int follower = (leader + 1) % 3;

            etcd.pause(follower);

            assertThat(etcd.isPaused(follower)).isTrue();
            assertThat(put(etcd.endpoint(follower), "a2V5", "dmFsdWU=")).isFalse();
            etcd.resume(follower);
            await().atMost(Duration.ofSeconds(20)).until(() -> put(etcd.endpoint(follower), "a2V5", "dmFsdWU="));
        }
    }

    /** A put through the JSON gateway; key and value base64 as the gateway wants them. */
    private boolean put(String endpoint, String key, String value) {
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(endpoint + "/v3/kv/put"))
                .timeout(Duration.ofSeconds(2))
                .POST(HttpRequest.BodyPublishers.ofString("{\"key\":\"" + key + "\",\"value\":\"" + value + "\"}"))
                .build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 && response.body().contains("revision");
        }
        catch (java.io.IOException ex) {
            return false;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

}
