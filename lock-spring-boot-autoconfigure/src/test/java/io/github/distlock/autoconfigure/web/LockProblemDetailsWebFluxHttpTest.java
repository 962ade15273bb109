package io.github.distlock.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import com.fasterxml.jackson.databind.JsonNode;

import io.github.distlock.LockHandle;
import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * The same 409 problem detail from a WebFlux application, over real HTTP against a real
 * Redis, for a {@code Mono} method whose lock another owner holds.
 */
@SpringBootTest(classes = LockWebTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "spring.main.web-application-type=reactive")
@ExtendWith(OutputCaptureExtension.class)
@DirtiesContext
class LockProblemDetailsWebFluxHttpTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @DynamicPropertySource
    static void redisAddress(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", redis::host);
        registry.add("spring.data.redis.port", redis::port);
    }

    @LocalServerPort
    int port;

    @Autowired
    LockService locks;

    @Autowired
    ApplicationContext context;

    @Test
    void lockHeldByAnotherOwnerAnswers409ProblemWithRetryAfter(CapturedOutput output) {
        assertThat(context).isInstanceOf(BootAutoConfigurations.REACTIVE_WEB_APPLICATION_CONTEXT);
        LockWebTestApplication.Http http = new LockWebTestApplication.Http(port);
        try (LockHandle held = locks.lock("order:3", Duration.ofSeconds(30), Duration.ZERO)) {
            HttpResponse<String> response = http.post("/orders/3/ship-reactive");

            assertThat(response.statusCode()).isEqualTo(409);
            assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            JsonNode problem = LockWebTestApplication.Http.json(response);
            assertThat(problem.path("type").asText()).isEqualTo("https://distlock.github.io/problems/lock-busy");
            assertThat(problem.path("title").asText()).isEqualTo("Resource busy");
            assertThat(problem.path("lockKey").asText()).isEqualTo("order:3");
            assertThat(held.isHeld()).isTrue();
        }

        assertThat(http.post("/orders/3/ship-reactive").body()).isEqualTo("shipped 3");
        assertThat(output.getAll()).doesNotContain("LockTimeoutException")
            .doesNotContain(" ERROR ")
            .doesNotContain("\tat ");
    }

    @Test
    void aBlankKeyFromARequestParameterAnswers400ProblemWithoutAnErrorOrStackTraceInTheLog(CapturedOutput output) {
        LockWebTestApplication.Http http = new LockWebTestApplication.Http(port);

        HttpResponse<String> response = http.post("/coupons/redeem-reactive?code=%20");

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        JsonNode problem = LockWebTestApplication.Http.json(response);
        assertThat(problem.path("type").asText()).isEqualTo("https://distlock.github.io/problems/invalid-lock-key");
        assertThat(problem.path("title").asText()).isEqualTo("Invalid lock key");
        assertThat(problem.path("detail").asText()).contains("empty or blank");
        assertThat(problem.path("lockKey").asText()).isEqualTo(" ");
        assertThat(output.getAll()).doesNotContain(" ERROR ")
            .doesNotContain("\tat ")
            .doesNotContain("InvalidLockKeyException");
        assertThat(http.post("/coupons/redeem-reactive?code=SPRING").body()).isEqualTo("redeemed SPRING");
    }

    @Test
    void aKeyLongerThanTheMaximumAnswers400NamingThePropertyWithoutEchoingTheKey(CapturedOutput output) {
        LockWebTestApplication.Http http = new LockWebTestApplication.Http(port);
        // Below WebFlux's 256 KB limit on a body read into memory, and SpEL's 100,000
        // characters in a concatenation.
        String name = "y".repeat(90_000);

        HttpResponse<String> response = http.post("/imports-reactive", name);

        assertThat(response.statusCode()).isEqualTo(400);
        JsonNode problem = LockWebTestApplication.Http.json(response);
        assertThat(problem.path("type").asText()).isEqualTo("https://distlock.github.io/problems/invalid-lock-key");
        assertThat(problem.path("detail").asText()).contains("longer than the 1024 characters accepted",
                "distributed-lock.max-key-length");
        assertThat(problem.path("keyLength").asInt()).isEqualTo(90_007);
        assertThat(problem.path("lockKey").asText()).isEqualTo("import:" + "y".repeat(43) + "...");
        assertThat(response.body()).hasSizeLessThan(1_000);
        assertThat(output.getAll()).doesNotContain(" ERROR ").doesNotContain("\tat ").doesNotContain("y".repeat(51));
    }

}
