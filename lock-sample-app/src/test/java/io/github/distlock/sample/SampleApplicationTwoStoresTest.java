package io.github.distlock.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.core.LockContext;
import io.github.distlock.core.LockListener;
import io.github.distlock.sample.ledger.FencedLedger;
import io.github.distlock.sample.ledger.LedgerBalance;
import io.github.distlock.sample.stock.LocalServerHttp;
import io.github.distlock.sample.zookeeper.EmbeddedZooKeeperInitializer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.web.client.RestTemplate;

/**
 * The whole sample application with both of its stores started by the sample itself (an
 * embedded redis-server and an embedded ZooKeeper): the stock's lock is a Redis key, the
 * ledger's a ZooKeeper node whose zxid is the fencing token, both seen in the stores
 * while held; concurrent payouts never overlap; the ledger refuses a stale token.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        // A private embedded redis-server: never the Redis that may answer on
        // localhost:6379.
        "sample.embedded-redis.mode=always",
        // A payout's work is wide enough that two payouts holding the lock at once would
        // read the same balance and lose an update.
        "sample.ledger.work-delay=10ms",
        // Payouts queue behind each other; a slow machine must not turn that into 409s.
        "sample.ledger.lock-wait-time=30s" })
// The embedded servers stop with this class's context; a cached one would outlive them.
@DirtiesContext
class SampleApplicationTwoStoresTest {

    private static final HttpStatus UNPROCESSABLE = HttpStatus.valueOf(422);

    private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
    };

    @LocalServerPort
    int port;

    @Autowired
    HeldLockProbe probe;

    @Autowired
    MeterRegistry meters;

    @Autowired
    StringRedisTemplate redis;

    @Autowired
    LockService lockService;

    @Autowired
    Environment environment;

    RestTemplate http;

    @BeforeEach
    void client() {
        http = LocalServerHttp.client(port);
    }

    @Test
    void theStockLockIsARedisKeyAndTheLedgerLockAZooKeeperNodeWhoseZxidIsThePayoutsToken() {
        assertThat(environment.getProperty(EmbeddedZooKeeperInitializer.CONNECT_STRING_PROPERTY))
            .as("the embedded ZooKeeper's address")
            .startsWith("127.0.0.1:");

        call(HttpMethod.PUT, "/stock/widget?quantity=3", HttpStatus.OK);
        call(HttpMethod.POST, "/stock/widget/deduct", HttpStatus.OK);
        call(HttpMethod.PUT, "/ledger/acme?balance=100", HttpStatus.OK);
        Map<String, Object> payout = call(HttpMethod.POST, "/ledger/acme/payout?amount=30", HttpStatus.OK);

        List<Sighting> stock = probe.sightingsOf("stock:widget");
        assertThat(stock).hasSize(2).allSatisfy(sighting -> {
            assertThat(sighting.backend()).isEqualTo("redis");
            assertThat(sighting.redisLockKeyPresent()).as("lock:{stock:widget} in Redis while held").isTrue();
            assertThat(sighting.zooKeeperNodes()).as("nodes under /distributed-lock/stock:widget").isEmpty();
        });
        assertThat(stock).extracting(Sighting::name).contains("StockService.deduct");

        List<Sighting> ledger = probe.sightingsOf("ledger:acme");
        assertThat(ledger).hasSize(2).allSatisfy(sighting -> {
            assertThat(sighting.backend()).isEqualTo("zookeeper");
            assertThat(sighting.name()).isEqualTo("ledger");
            assertThat(sighting.redisLockKeyPresent()).as("lock:{ledger:acme} in Redis while held").isFalse();
            assertThat(sighting.zooKeeperNodes()).as("nodes under /distributed-lock/ledger:acme while held")
                .singleElement()
                .asString()
                .startsWith("lock-");
        });
        long token = ((Number) payout.get("fencingToken")).longValue();
        assertThat(ledger.get(1).holderCzxid()).as("the payout's token is its lock node's czxid").isEqualTo(token);
        assertThat(ledger.get(1).holderCzxid()).isGreaterThan(ledger.get(0).holderCzxid());

        // The registry is the context's, shared with the other tests: at least these, and
        // never on the other store.
        assertThat(acquisitions("ledger", "zookeeper")).isGreaterThanOrEqualTo(2);
        assertThat(acquisitions("ledger", "redis")).isZero();
        assertThat(acquisitions("StockService.deduct", "redis")).isGreaterThanOrEqualTo(1);
        assertThat(acquisitions("StockService.deduct", "zookeeper")).isZero();
    }

    @Test
    void concurrentPayoutsNeverOverlapSoTheLedgerPaysExactlyItsBalanceWithStrictlyIncreasingTokens() throws Exception {
        call(HttpMethod.PUT, "/ledger/payroll?balance=100", HttpStatus.OK);

        List<ResponseEntity<Map<String, Object>>> responses = new ArrayList<>();
        ExecutorService clients = Executors.newFixedThreadPool(8);
        try {
            List<Future<ResponseEntity<Map<String, Object>>>> calls = new ArrayList<>();
            for (int i = 0; i < 14; i++) {
                calls.add(clients
                    .submit(() -> http.exchange("/ledger/payroll/payout?amount=10", HttpMethod.POST, null, JSON)));
            }
            for (Future<ResponseEntity<Map<String, Object>>> call : calls) {
                responses.add(call.get(60, TimeUnit.SECONDS));
            }
        }
        finally {
            clients.shutdownNow();
        }

        // Two payouts inside the lock at once would read the same balance: an update
        // lost (more paid than the balance had) or a write refused as stale (409).
        assertThat(responses).extracting(response -> response.getStatusCode().value())
            .containsOnly(200, UNPROCESSABLE.value());
        List<Long> tokens = responses.stream()
            .filter(response -> response.getStatusCode().value() == 200)
            .map(response -> ((Number) response.getBody().get("fencingToken")).longValue())
            .toList();
        assertThat(tokens).hasSize(10).doesNotHaveDuplicates();
        Map<String, Object> account = call(HttpMethod.GET, "/ledger/payroll", HttpStatus.OK);
        assertThat(account).containsEntry("balance", 0).containsEntry("paidOut", 100);
        assertThat(((Number) account.get("fence")).longValue()).isEqualTo(tokens.stream().max(Long::compare).get());
        // While each payout held the lock, the lowest node in ZooKeeper (the
        // holder) was its own, whoever queued behind it; and the holders followed
        // each other in token order.
        List<Sighting> payroll = probe.sightingsOf("ledger:payroll");
        assertThat(payroll).hasSize(15)
            .allSatisfy(sighting -> assertThat(sighting.holderCzxid())
                .as("the holder's node while %s held", sighting.token())
                .isEqualTo(sighting.token()));
        assertThat(payroll).extracting(Sighting::token).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void theLedgerRefusesAWriteCarryingATokenOlderThanItsLast() {
        // A holder that took the lock, was paused past its lease and writes only now.
        long stale;
        try (LockHandle paused = lockService
            .lock(LockRequest.of("ledger:savings").withBackend("zookeeper").withFencingToken())) {
            stale = paused.fencingToken();
        }
        Map<String, Object> opened = call(HttpMethod.PUT, "/ledger/savings?balance=50", HttpStatus.OK);
        long fence = ((Number) opened.get("fence")).longValue();
        assertThat(fence).isGreaterThan(stale);

        FencedLedger ledger = new FencedLedger(redis);
        assertThat(ledger.write("savings", stale, 1_000_000, 0)).isFalse();

        assertThat(ledger.read("savings")).isEqualTo(new LedgerBalance("savings", 50, 0, fence));
    }

    @Test
    void aPayoutLargerThanTheBalanceAnswers422AndPaysNothing() {
        call(HttpMethod.PUT, "/ledger/petty?balance=5", HttpStatus.OK);

        Map<String, Object> problem = call(HttpMethod.POST, "/ledger/petty/payout?amount=6", UNPROCESSABLE);

        assertThat(problem).containsEntry("title", "Insufficient funds").containsEntry("account", "petty");
        assertThat(call(HttpMethod.GET, "/ledger/petty", HttpStatus.OK)).containsEntry("balance", 5)
            .containsEntry("paidOut", 0);
    }

    private Map<String, Object> call(HttpMethod method, String uri, HttpStatus expected) {
        ResponseEntity<Map<String, Object>> response = http.exchange(uri, method, null, JSON);
        assertThat(response.getStatusCode().value()).as(method + " " + uri + ": " + response.getBody())
            .isEqualTo(expected.value());
        return response.getBody();
    }

    private long acquisitions(String name, String backend) {
        Timer timer = meters.find("distributed.lock.acquire")
            .tag("lock.name", name)
            .tag("backend", backend)
            .tag("outcome", "acquired")
            .timer();
        return timer == null ? 0 : timer.count();
    }

    /**
     * One acquisition, and what the two stores held for its key at that moment.
     *
     * @param token the acquisition's fencing token, if it has one yet, else 0
     * @param zooKeeperNodes the children of {@code /distributed-lock/<key>}: the holder
     * and anyone queued behind it
     * @param holderCzxid the czxid of the lowest child (the holder), 0 if none
     */
    record Sighting(String name, String key, String backend, long token, boolean redisLockKeyPresent,
            List<String> zooKeeperNodes, long holderCzxid) {
    }

    /**
     * Looks into Redis and ZooKeeper the moment a lock is acquired, on the acquiring
     * thread, so while it is held.
     */
    static final class HeldLockProbe implements LockListener, DisposableBean {

        private final StringRedisTemplate redis;

        private final CuratorFramework zooKeeper;

        private final List<Sighting> sightings = new CopyOnWriteArrayList<>();

        HeldLockProbe(StringRedisTemplate redis, String connectString) throws InterruptedException {
            this.redis = redis;
            this.zooKeeper = CuratorFrameworkFactory.newClient(connectString, new RetryOneTime(100));
            zooKeeper.start();
            if (!zooKeeper.blockUntilConnected(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("The test's client did not reach the ZooKeeper at " + connectString);
            }
        }

        @Override
        public void acquired(LockContext lock) {
            String key = lock.key();
            boolean inRedis = Boolean.TRUE.equals(redis.hasKey("lock:{" + key + "}"));
            String path = "/distributed-lock/" + key;
            try {
                List<String> nodes = zooKeeper.checkExists().forPath(path) == null ? List.of()
                        : zooKeeper.getChildren().forPath(path);
                long czxid = 0;
                if (!nodes.isEmpty()) {
                    // The holder is the child with the lowest sequence, the
                    // number after its last '-'.
                    String holder = nodes.stream()
                        .min(Comparator.comparing(node -> node.substring(node.lastIndexOf('-') + 1)))
                        .get();
                    Stat stat = zooKeeper.checkExists().forPath(path + "/" + holder);
                    czxid = stat == null ? 0 : stat.getCzxid();
                }
                sightings.add(new Sighting(lock.name(), key, lock.backend(), lock.fencingToken().orElse(0), inRedis,
                        List.copyOf(nodes), czxid));
            }
            catch (Exception e) {
                throw new IllegalStateException("Could not look at " + path, e);
            }
        }

        List<Sighting> sightingsOf(String key) {
            return sightings.stream().filter(sighting -> sighting.key().equals(key)).toList();
        }

        @Override
        public void destroy() {
            zooKeeper.close();
        }

    }

    @TestConfiguration(proxyBeanMethods = false)
    static class Probe {

        @Bean
        HeldLockProbe heldLockProbe(StringRedisTemplate redis, Environment environment) throws InterruptedException {
            return new HeldLockProbe(redis,
                    environment.getRequiredProperty(EmbeddedZooKeeperInitializer.CONNECT_STRING_PROPERTY));
        }

    }

}
