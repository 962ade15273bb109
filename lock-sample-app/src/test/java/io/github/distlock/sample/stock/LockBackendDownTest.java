package io.github.distlock.sample.stock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import io.github.distlock.testsupport.RedisServerExtension;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestTemplate;

/**
 * An unreachable Redis answers 503 with a problem body. A class of its own, with its own
 * server and context, because it leaves the server stopped.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "sample.embedded-redis.mode=never",
                // Fail fast instead of waiting out the defaults while Redis is gone.
                "distributed-lock.operation-timeout=500ms", "spring.data.redis.timeout=500ms",
                "spring.data.redis.connect-timeout=500ms" })
@DirtiesContext
class LockBackendDownTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @DynamicPropertySource
    static void redisAddress(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", redis::host);
        registry.add("spring.data.redis.port", redis::port);
    }

    @LocalServerPort
    int port;

    RestTemplate http;

    @BeforeEach
    void client() {
        http = LocalServerHttp.client(port);
    }

    @Test
    void unreachableRedisAnswers503Problem() {
        assertThat(http.exchange("/stock/any?quantity=3", HttpMethod.PUT, null, String.class).getStatusCode())
            .isEqualTo(HttpStatus.OK);

        redis.server().kill();
        ResponseEntity<Map<String, Object>> response = http.exchange("/stock/any/deduct", HttpMethod.POST, null,
                new ParameterizedTypeReference<Map<String, Object>>() {
                });

        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(response.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
        assertThat(response.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("5");
        assertThat(response.getBody()).containsEntry("title", "Lock unavailable").containsEntry("lockKey", "stock:any");
    }

}
