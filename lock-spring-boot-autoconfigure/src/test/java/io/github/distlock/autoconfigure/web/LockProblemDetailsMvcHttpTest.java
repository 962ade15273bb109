package io.github.distlock.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import com.fasterxml.jackson.databind.JsonNode;

import io.github.distlock.LockHandle;
import io.github.distlock.LockService;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * Lock failures of a Spring MVC application, over real HTTP against a real Redis: a busy
 * lock answers 409 and a lease lost during the request 500, each a problem detail, and
 * neither leaves a stack trace in the log.
 */
@SpringBootTest(classes = LockWebTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ExtendWith(OutputCaptureExtension.class)
// The fixture stops after this class; a cached context would keep reconnecting to it.
@DirtiesContext
class LockProblemDetailsMvcHttpTest {

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

    private LockWebTestApplication.Http http;

    @BeforeEach
    void client() {
        http = new LockWebTestApplication.Http(port);
    }

    @Test
    void lockHeldByAnotherOwnerAnswers409ProblemWithRetryAfter(CapturedOutput output) {
        try (LockHandle held = locks.lock("order:1", Duration.ofSeconds(30), Duration.ZERO)) {
            String holdersToken = redis.server().get("lock:{order:1}");

            HttpResponse<String> response = http.post("/orders/1/ship");

            assertThat(response.statusCode()).isEqualTo(409);
            assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            JsonNode problem = LockWebTestApplication.Http.json(response);
            assertThat(problem.path("type").asText()).isEqualTo("https://distlock.github.io/problems/lock-busy");
            assertThat(problem.path("title").asText()).isEqualTo("Resource busy");
            assertThat(problem.path("status").asInt()).isEqualTo(409);
            assertThat(problem.path("detail").asText())
                .isEqualTo("Another request is working on 'order:1'. This request was not processed; retry later.");
            assertThat(problem.path("instance").asText()).isEqualTo("/orders/1/ship");
            assertThat(problem.path("lockKey").asText()).isEqualTo("order:1");
            assertThat(problem.path("waitedMillis").asLong()).isEqualTo(200);
            assertThat(response.body()).doesNotContain(holdersToken);
            assertThat(held.isHeld()).isTrue();
        }

        assertThat(http.post("/orders/1/ship").body()).isEqualTo("shipped 1");
        assertThat(output.getAll()).doesNotContain("LockTimeoutException")
            .doesNotContain(" ERROR ")
            .doesNotContain("\tat ");
    }

    @Test
    void aBlankKeyFromARequestParameterAnswers400ProblemWithoutAnErrorOrStackTraceInTheLog(CapturedOutput output) {
        HttpResponse<String> response = http.post("/coupons/redeem?code=%20%20");

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.headers().firstValue("Retry-After")).isEmpty();
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        JsonNode problem = LockWebTestApplication.Http.json(response);
        assertThat(problem.path("type").asText()).isEqualTo("https://distlock.github.io/problems/invalid-lock-key");
        assertThat(problem.path("title").asText()).isEqualTo("Invalid lock key");
        assertThat(problem.path("status").asInt()).isEqualTo(400);
        assertThat(problem.path("detail").asText()).isEqualTo("The lock key built from this request is empty or "
                + "blank. This request was not processed; send a non-blank value.");
        assertThat(problem.path("instance").asText()).isEqualTo("/coupons/redeem");
        assertThat(problem.path("lockKey").asText()).isEqualTo("  ");
        // A missing parameter is a null key: the same client error.
        assertThat(http.post("/coupons/redeem").statusCode()).isEqualTo(400);
        assertThat(output.getAll()).doesNotContain(" ERROR ")
            .doesNotContain("\tat ")
            .doesNotContain("InvalidLockKeyException")
            .doesNotContain("IllegalArgumentException");
        assertThat(http.post("/coupons/redeem?code=SPRING").body()).isEqualTo("redeemed SPRING");
    }

    @Test
    void aKeyLongerThanTheMaximumAnswers400NamingThePropertyWithoutEchoingTheKey(CapturedOutput output) {
        String name = "x".repeat(1_500_000);

        HttpResponse<String> response = http.post("/imports", name);

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        JsonNode problem = LockWebTestApplication.Http.json(response);
        assertThat(problem.path("type").asText()).isEqualTo("https://distlock.github.io/problems/invalid-lock-key");
        assertThat(problem.path("title").asText()).isEqualTo("Invalid lock key");
        assertThat(problem.path("detail").asText()).isEqualTo("The lock key built from this request is longer than "
                + "the 1024 characters accepted (distributed-lock.max-key-length). This request was not processed; "
                + "send a shorter value.");
        assertThat(problem.path("lockKey").asText()).isEqualTo("x".repeat(50) + "...");
        assertThat(problem.path("keyLength").asInt()).isEqualTo(1_500_000);
        assertThat(problem.path("maxKeyLength").asInt()).isEqualTo(1024);
        assertThat(response.body()).hasSizeLessThan(1_000);
        assertThat((List<?>) redis.server().command("KEYS", "lock:{xxx*")).isEmpty();
        assertThat(output.getAll()).doesNotContain(" ERROR ").doesNotContain("\tat ").doesNotContain("x".repeat(51));
        assertThat(http.post("/imports", "x".repeat(1024)).body()).isEqualTo("imported 1024");
    }

    @Test
    void aKeyExpressionConcatenatingAHugeValueAnswers400TooInsteadOfSpelsError(CapturedOutput output) {
        // SpEL refuses to build a string over 100,000 characters, before the key's length
        // can be checked.
        HttpResponse<String> response = http.post("/imports/prefixed", "x".repeat(150_000));

        assertThat(response.statusCode()).isEqualTo(400);
        JsonNode problem = LockWebTestApplication.Http.json(response);
        assertThat(problem.path("type").asText()).isEqualTo("https://distlock.github.io/problems/invalid-lock-key");
        assertThat(problem.path("detail").asText()).contains("longer than the 1024 characters accepted",
                "distributed-lock.max-key-length");
        assertThat(problem.has("keyLength")).isFalse();
        assertThat(output.getAll()).doesNotContain(" ERROR ").doesNotContain("\tat ");
    }

    @Test
    void leaseLostWhileTheRequestRanAnswers500ProblemWithoutRetryAfter(CapturedOutput output) {
        HttpResponse<String> response = http.post("/reports/7");

        assertThat(response.statusCode()).isEqualTo(500);
        assertThat(response.headers().firstValue("Retry-After")).isEmpty();
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        JsonNode problem = LockWebTestApplication.Http.json(response);
        assertThat(problem.path("type").asText()).isEqualTo("https://distlock.github.io/problems/lock-lost");
        assertThat(problem.path("title").asText()).isEqualTo("Lock lost");
        assertThat(problem.path("lockKey").asText()).isEqualTo("report:7");
        assertThat(output.getAll()).contains("Lock 'report:7' lost while the request ran; answered 500")
            .doesNotContain(" ERROR ")
            .doesNotContain("\tat ");
    }

}
