package io.github.distlock.sample.actuator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.sample.stock.LocalServerHttp;
import io.github.distlock.testsupport.RedisServerExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestTemplate;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;

/**
 * The sample's Actuator over real HTTP, on a random port, against a real redis-server:
 * while a lock is held and another caller waits for it, {@code /actuator/locks} lists
 * both, {@code /actuator/locks/{key}} shows the key's state in Redis,
 * {@code /actuator/health} reports the lock store, and no response contains the holder's
 * random token.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        // The fixture below is the Redis; never start an embedded one, and never probe
        // localhost:6379.
        "sample.embedded-redis.mode=never" })
// The fixture stops after this class; a cached context would keep reconnecting to it.
@DirtiesContext
class LocksActuatorHttpTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @DynamicPropertySource
    static void redisAddress(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", redis::host);
        registry.add("spring.data.redis.port", redis::port);
    }

    @LocalServerPort
    int port;

    private RestTemplate http() {
        return LocalServerHttp.client(port);
    }

    @Autowired
    LockService lockService;

    private DocumentContext getJson(String path, HttpStatus expected) {
        ResponseEntity<String> response = http().getForEntity(path, String.class);
        assertThat(response.getStatusCode().value()).as(path + ": " + response.getBody()).isEqualTo(expected.value());
        return JsonPath.parse(response.getBody());
    }

    @Test
    void locksKeyStateAndHealthAnswerOverHttpWhileALockIsHeldAndNeverShowItsToken() throws Exception {
        CompletableFuture<LockHandle> waiter = new CompletableFuture<>();
        long fence;
        try (LockHandle holder = lockService.lock(LockRequest.of("stock:widget")
            .withName("restock")
            .withTtl(Duration.ofSeconds(30))
            .withFencingToken())) {
            fence = holder.fencingToken();
            Thread waiting = new Thread(() -> waiter.complete(lockService.lock(LockRequest.of("stock:widget")
                .withName("restock")
                .withTtl(Duration.ofSeconds(30))
                .withWaitTime(Duration.ofSeconds(30)))), "waiting-caller");
            waiting.start();
            await().atMost(Duration.ofSeconds(10))
                .until(() -> getJson("/actuator/locks", HttpStatus.OK).read("$.waiting.length()", Integer.class) == 1);

            String token = redis.server().get("lock:{stock:widget}");
            assertThat(token).hasSizeGreaterThan(16);

            ResponseEntity<String> locksResponse = http().getForEntity("/actuator/locks", String.class);
            assertThat(locksResponse.getBody()).doesNotContain(token);
            DocumentContext locks = JsonPath.parse(locksResponse.getBody());
            assertThat(locks.read("$.held[*].key", List.class)).containsExactly("stock:widget");
            assertThat(locks.read("$.held[0].name", String.class)).isEqualTo("restock");
            assertThat(locks.read("$.held[0].redisKey", String.class)).isEqualTo("lock:{stock:widget}");
            assertThat(locks.read("$.held[0].thread", String.class)).isEqualTo(Thread.currentThread().getName());
            assertThat(locks.read("$.held[0].since", String.class)).isNotBlank();
            assertThat(locks.read("$.held[0].leaseLeftMillis", Long.class)).isPositive().isLessThanOrEqualTo(30_000);
            assertThat(locks.read("$.held[0].renewals", Integer.class)).isZero();
            assertThat(locks.read("$.held[0].fencingTokenIssued", Boolean.class)).isTrue();
            assertThat(locks.read("$.held[0].fencingToken", Long.class)).isEqualTo(fence);
            assertThat(locks.read("$.waiting[0].key", String.class)).isEqualTo("stock:widget");
            assertThat(locks.read("$.waiting[0].thread", String.class)).isEqualTo("waiting-caller");
            assertThat(locks.read("$.waiting[0].waitingForMillis", Long.class)).isNotNegative();

            ResponseEntity<String> keyResponse = http().getForEntity("/actuator/locks/stock:widget", String.class);
            assertThat(keyResponse.getStatusCode()).isEqualTo(HttpStatus.OK);
            assertThat(keyResponse.getBody()).doesNotContain(token);
            DocumentContext key = JsonPath.parse(keyResponse.getBody());
            assertThat(key.read("$.held", Boolean.class)).isTrue();
            assertThat(key.read("$.pttlMillis", Long.class)).isPositive().isLessThanOrEqualTo(30_000);
            assertThat(key.read("$.queueLength", Long.class)).isEqualTo(1);
            assertThat(key.read("$.lastFencingToken", Long.class)).isEqualTo(fence);
            assertThat(key.read("$.heldHere[0].thread", String.class)).isEqualTo(Thread.currentThread().getName());

            // A key with a slash is written as it is; the endpoint joins the path
            // segments again.
            DocumentContext free = getJson("/actuator/locks/orders/7", HttpStatus.OK);
            assertThat(free.read("$.key", String.class)).isEqualTo("orders/7");
            assertThat(free.read("$.held", Boolean.class)).isFalse();
            assertThat(free.read("$.pttlMillis", Long.class)).isEqualTo(-2);

            ResponseEntity<String> healthResponse = http().getForEntity("/actuator/health", String.class);
            assertThat(healthResponse.getStatusCode()).as(healthResponse.getBody()).isEqualTo(HttpStatus.OK);
            assertThat(healthResponse.getBody()).doesNotContain(token);
            DocumentContext health = JsonPath.parse(healthResponse.getBody());
            // The same on Spring Boot 3 and 4: each has a contributor of its own, on its
            // own health API.
            assertThat(health.read("$.components.distributedLock.status", String.class)).isEqualTo("UP");
            // The node is named by its address.
            assertThat(health.read(
                    "$.components.distributedLock.details.nodes['" + redis.host() + ":" + redis.port() + "'].reachable",
                    Boolean.class))
                .isTrue();
            assertThat(health.read("$.components.distributedLock.details.watchdog.lagging", Boolean.class)).isFalse();
        }
        waiter.get(10, TimeUnit.SECONDS).release();
        DocumentContext after = getJson("/actuator/locks", HttpStatus.OK);
        assertThat(after.read("$.held.length()", Integer.class)).isZero();
        assertThat(after.read("$.waiting.length()", Integer.class)).isZero();
        DocumentContext released = getJson("/actuator/locks/stock:widget", HttpStatus.OK);
        assertThat(released.read("$.held", Boolean.class)).isFalse();
        assertThat(released.read("$.lastFencingToken", Long.class)).isGreaterThanOrEqualTo(fence);
    }

}
