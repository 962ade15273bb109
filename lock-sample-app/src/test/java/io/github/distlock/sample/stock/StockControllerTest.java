package io.github.distlock.sample.stock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.github.distlock.LockHandle;
import io.github.distlock.LockService;
import io.github.distlock.testsupport.RedisServerExtension;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
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

/** The HTTP endpoints against a real redis-server started for this class. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        // The fixture below is the Redis; never start an embedded one, and never probe
        // localhost:6379.
        "sample.embedded-redis.mode=never",
        // Short, so that the 409 test does not wait long for a lock it cannot get.
        "sample.stock.lock-wait-time=1s" })
// The fixture stops after this class; a cached context would keep reconnecting to it.
@DirtiesContext
class StockControllerTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @DynamicPropertySource
    static void redisAddress(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", redis::host);
        registry.add("spring.data.redis.port", redis::port);
    }

    // 422 by number: Spring Framework 7 (Boot 4) renamed its constant
    // UNPROCESSABLE_CONTENT and answers valueOf(422)
    // with the new one, so the Boot 3 name would not match there.
    private static final HttpStatus UNPROCESSABLE = HttpStatus.valueOf(422);

    private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
    };

    @LocalServerPort
    int port;

    RestTemplate http;

    @BeforeEach
    void client() {
        http = LocalServerHttp.client(port);
    }

    @Autowired
    LockService lockService;

    @Test
    void guardedDeductionSellsExactlyTheStockUnderConcurrentRequests() throws Exception {
        put("/stock/widget?quantity=10");

        List<HttpStatus> statuses = new ArrayList<>();
        ExecutorService clients = Executors.newFixedThreadPool(8);
        try {
            List<Future<ResponseEntity<Map<String, Object>>>> responses = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                responses.add(clients.submit(() -> post("/stock/widget/deduct")));
            }
            for (Future<ResponseEntity<Map<String, Object>>> response : responses) {
                statuses.add(HttpStatus.valueOf(response.get().getStatusCode().value()));
            }
        }
        finally {
            clients.shutdownNow();
        }

        assertThat(statuses).filteredOn(HttpStatus.OK::equals).hasSize(10);
        assertThat(statuses).filteredOn(UNPROCESSABLE::equals).hasSize(6);
        assertThat(get("/stock/widget").getBody()).containsEntry("stock", 0).containsEntry("sold", 10);
    }

    @Test
    void deductionAnswersTheSaleAndOutOfStockAsProblem() {
        put("/stock/gadget?quantity=1");

        ResponseEntity<Map<String, Object>> sold = post("/stock/gadget/deduct");
        assertThat(sold.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(sold.getBody()).containsEntry("sku", "gadget")
            .containsEntry("deducted", true)
            .containsEntry("remaining", 0);

        ResponseEntity<Map<String, Object>> soldOut = post("/stock/gadget/deduct");
        assertThat(soldOut.getStatusCode()).isEqualTo(UNPROCESSABLE);
        assertThat(soldOut.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
        assertThat(soldOut.getBody()).containsEntry("title", "Out of stock").containsEntry("sku", "gadget");
    }

    @Test
    void lockHeldElsewhereAnswers409ProblemAndChangesNothing() {
        put("/stock/busy?quantity=5");

        // Another instance (here: the same LockService, as any holder would) is working
        // on the SKU.
        try (LockHandle held = lockService.lock("stock:busy", Duration.ofSeconds(30), Duration.ZERO)) {
            ResponseEntity<Map<String, Object>> response = post("/stock/busy/deduct");

            assertThat(response.getStatusCode()).isEqualTo(HttpStatus.CONFLICT);
            assertThat(response.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
            assertThat(response.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
            assertThat(response.getBody()).containsEntry("status", 409)
                .containsEntry("type", "https://distlock.github.io/problems/lock-busy")
                .containsEntry("title", "Resource busy")
                .containsEntry("lockKey", "stock:busy")
                .containsKey("detail");
            assertThat(held.isHeld()).isTrue();
        }

        assertThat(get("/stock/busy").getBody()).containsEntry("stock", 5).containsEntry("sold", 0);
        // Once the holder released, the same request goes through.
        assertThat(post("/stock/busy/deduct").getStatusCode()).isEqualTo(HttpStatus.OK);
    }

    @Test
    void unguardedTwinDeductsToo() {
        put("/stock/twin?quantity=2");

        assertThat(post("/stock/twin/deduct-unguarded").getStatusCode()).isEqualTo(HttpStatus.OK);

        assertThat(get("/stock/twin").getBody()).containsEntry("stock", 1).containsEntry("sold", 1);
    }

    @Test
    void resetRejectsNegativeQuantityAndUnknownSkuHasNoStock() {
        ResponseEntity<Map<String, Object>> negative = http.exchange("/stock/odd?quantity=-1", HttpMethod.PUT, null,
                JSON);
        assertThat(negative.getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(negative.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);

        assertThat(get("/stock/never-stocked").getBody()).containsEntry("stock", 0).containsEntry("sold", 0);
    }

    private ResponseEntity<Map<String, Object>> put(String uri) {
        ResponseEntity<Map<String, Object>> response = http.exchange(uri, HttpMethod.PUT, null, JSON);
        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.OK);
        return response;
    }

    private ResponseEntity<Map<String, Object>> post(String uri) {
        return http.exchange(uri, HttpMethod.POST, null, JSON);
    }

    private ResponseEntity<Map<String, Object>> get(String uri) {
        return http.exchange(uri, HttpMethod.GET, null, JSON);
    }

}
