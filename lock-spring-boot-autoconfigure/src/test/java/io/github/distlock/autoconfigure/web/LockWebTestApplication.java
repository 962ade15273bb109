package io.github.distlock.autoconfigure.web;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.awaitility.Awaitility.await;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.github.distlock.DistributedLock;
import reactor.core.publisher.Mono;

/**
 * A web application as a user writes one: a controller calling {@code @DistributedLock}
 * methods, everything else auto-configured. The HTTP tests run it on a random port
 * against a test Redis.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ LockWebTestApplication.OrderController.class, LockWebTestApplication.OrderService.class })
class LockWebTestApplication {

    @RestController
    static class OrderController {

        private final OrderService orders;

        OrderController(OrderService orders) {
            this.orders = orders;
        }

        @PostMapping("/orders/{id}/ship")
        String ship(@PathVariable String id) {
            return orders.ship(id);
        }

        @PostMapping("/orders/{id}/ship-reactive")
        Mono<String> shipReactive(@PathVariable String id) {
            return orders.shipReactive(id);
        }

        @PostMapping("/reports/{id}")
        String report(@PathVariable String id) {
            return orders.reportOutlivingItsLease(id);
        }

        @PostMapping("/coupons/redeem")
        String redeem(@RequestParam(required = false) String code) {
            return orders.redeem(code);
        }

        @PostMapping("/coupons/redeem-reactive")
        Mono<String> redeemReactive(@RequestParam(required = false) String code) {
            return orders.redeemReactive(code);
        }

        @PostMapping("/imports")
        String importFile(@RequestBody String name) {
            return orders.importFile(name);
        }

        @PostMapping("/imports/prefixed")
        String importPrefixed(@RequestBody String name) {
            return orders.importPrefixed(name);
        }

        @PostMapping("/imports-reactive")
        Mono<String> importFileReactive(@RequestBody String name) {
            return orders.importFileReactive(name);
        }

    }

    @Service
    static class OrderService {

        private final StringRedisTemplate redis;

        OrderService(StringRedisTemplate redis) {
            this.redis = redis;
        }

        @DistributedLock(key = "'order:' + #id", waitTime = "200ms")
        public String ship(String id) {
            return "shipped " + id;
        }

        @DistributedLock(key = "'order:' + #id", waitTime = "200ms")
        public Mono<String> shipReactive(String id) {
            return Mono.just("shipped " + id);
        }

        /** Locks on a request parameter as it came, blank or not. */
        @DistributedLock(key = "#code", waitTime = "200ms")
        public String redeem(String code) {
            return "redeemed " + code;
        }

        @DistributedLock(key = "#code", waitTime = "200ms")
        public Mono<String> redeemReactive(String code) {
            return Mono.just("redeemed " + code);
        }

        /** Locks on a request body as it came, however long. */
        @DistributedLock(key = "#name", waitTime = "200ms")
        public String importFile(String name) {
            return "imported " + name.length();
        }

        @DistributedLock(key = "'import:' + #name", waitTime = "200ms")
        public String importPrefixed(String name) {
            return "imported " + name.length();
        }

        @DistributedLock(key = "'import:' + #name", waitTime = "200ms")
        public Mono<String> importFileReactive(String name) {
            return Mono.just("imported " + name.length());
        }

        /**
         * Works on until its fixed lease has run out, as a request stalled by a slow call
         * or a GC pause would.
         */
        @DistributedLock(key = "'report:' + #id", ttl = "300ms", watchdog = DistributedLock.Watchdog.DISABLED)
        public String reportOutlivingItsLease(String id) {
            await().atMost(Duration.ofSeconds(20)).until(() -> !redis.hasKey("lock:{report:" + id + "}"));
            return "report " + id;
        }

    }

    /** A real HTTP client against the running server. */
    static final class Http {

        private static final ObjectMapper JSON = new ObjectMapper();

        private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

        private final int port;

        Http(int port) {
            this.port = port;
        }

        HttpResponse<String> post(String path) {
            return send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .POST(HttpRequest.BodyPublishers.noBody()));
        }

        HttpResponse<String> post(String path, String body) {
            return send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .header("Content-Type", "text/plain")
                .POST(HttpRequest.BodyPublishers.ofString(body)));
        }

        private HttpResponse<String> send(HttpRequest.Builder builder) {
            HttpRequest request = builder.timeout(Duration.ofSeconds(30))
                .header("Accept", "application/json, application/problem+json")
                .build();
            try {
                return client.send(request, HttpResponse.BodyHandlers.ofString());
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
        }

        static JsonNode json(HttpResponse<String> response) {
            try {
                return JSON.readTree(response.body());
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }

    }

}
