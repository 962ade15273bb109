package io.github.distlock.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import com.fasterxml.jackson.databind.JsonNode;

import io.github.distlock.testsupport.RedisServerExtension;

/**
 * A Spring MVC application whose Redis is down answers 503 with {@code Retry-After}, over
 * real HTTP. A class of its own, with its own server and context, because it leaves the
 * server stopped.
 */
@SpringBootTest(classes = LockWebTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
                // Fail fast instead of waiting out the defaults while Redis is gone.
                "distributed-lock.operation-timeout=500ms", "spring.data.redis.timeout=500ms",
                "spring.data.redis.connect-timeout=500ms" })
@ExtendWith(OutputCaptureExtension.class)
@DirtiesContext
class LockProblemDetailsRedisDownHttpTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @DynamicPropertySource
    static void redisAddress(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", redis::host);
        registry.add("spring.data.redis.port", redis::port);
    }

    @LocalServerPort
    int port;

    @Test
    void redisDownAnswers503ProblemWithRetryAfter(CapturedOutput output) {
        LockWebTestApplication.Http http = new LockWebTestApplication.Http(port);
        assertThat(http.post("/orders/2/ship").statusCode()).isEqualTo(200);

        redis.server().stop();
        HttpResponse<String> response = http.post("/orders/2/ship");

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.headers().firstValue("Retry-After")).hasValue("5");
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        JsonNode problem = LockWebTestApplication.Http.json(response);
        assertThat(problem.path("type").asText()).isEqualTo("https://distlock.github.io/problems/lock-unavailable");
        assertThat(problem.path("title").asText()).isEqualTo("Lock unavailable");
        assertThat(problem.path("status").asInt()).isEqualTo(503);
        assertThat(problem.path("lockKey").asText()).isEqualTo("order:2");
        // The exception's message is for operators: it names the Redis key and the
        // timeout, never shown to clients.
        assertThat(response.body()).doesNotContain("lock:{order:2}").doesNotContain("operation-timeout");
        assertThat(output.getAll()).contains("Lock 'order:2' unavailable; answered 503")
            .doesNotContain(" ERROR ")
            .doesNotContain("\tat io.github.distlock");
    }

}
