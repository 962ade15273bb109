package io.github.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Redlock over five real, independent {@code redis-server} processes, each reached through a fault
 * proxy so that a test can slow, cut or black-hole any node: the majority rule, the validity rule,
 * the release everywhere, renewal by majority, and exclusion under contention.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedlockBackendTest {

    private static final int NODES = 5;
    private static final Duration NODE_TIMEOUT = Duration.ofMillis(300);

    private final List<RedisTestServer> servers = new ArrayList<>();
    private final List<RedisFaultProxy> proxies = new ArrayList<>();
    private final List<Service> services = new ArrayList<>();

    /** One application instance's view: a lock service on a Redlock of its own clients. */
    private record Service(DefaultLockService service, RedlockBackend backend, LeaseWatchdog watchdog,
            List<String> lost) implements AutoCloseable {

        @Override
        public void close() {
            service.close();
            watchdog.close();
            backend.close();
        }
    }

    @BeforeAll
    void startNodes() {
        for (int i = 0; i < NODES; i++) {
            RedisTestServer server = RedisTestServer.start();
            servers.add(server);
            proxies.add(RedisFaultProxy.start(server));
        }
    }

    @AfterAll
    void stopNodes() {
        proxies.forEach(RedisFaultProxy::close);
        servers.forEach(RedisTestServer::close);
    }

    @BeforeEach
    void healAndFlush() {
        for (int i = 0; i < NODES; i++) {
            if (servers.get(i).isPaused()) {
                servers.get(i).resume();
            }
            if (!servers.get(i).isRunning()) {
                servers.get(i).restart();
            }
            proxies.get(i).heal();
            proxies.get(i).delayAllReplies(Duration.ZERO);
            servers.get(i).flushAll();
        }
    }

    @AfterEach
    void closeServices() {
        services.forEach(Service::close);
        services.clear();
    }

    private Service service() {
        List<String> uris = proxies.stream().map(RedisFaultProxy::redisUri).toList();
        LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(uris, NODE_TIMEOUT, "lock:");
        RedlockBackend backend = nodes.redlock(0.01);
        List<String> lost = new CopyOnWriteArrayList<>();
        LeaseWatchdog watchdog = new LeaseWatchdog(backend, 1.0 / 3, (handle, reason) -> lost.add(handle.key()));
        DefaultLockService service = new DefaultLockService(backend, watchdog,
                new LockDefaults(Duration.ofSeconds(30), Duration.ofSeconds(3), true, Duration.ofMillis(20)),
                new LockWaiters());
        Service created = new Service(service, backend, watchdog, lost);
        services.add(created);
        // Connected to every node before the test's first vote: a cold connect can outlast the node timeout.
        await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> service.tryLock("warm-up",
                Duration.ofSeconds(1), Duration.ZERO).map(LockHandle::release).orElse(false));
        return created;
    }

    private long nodesHolding(String name) {
        return servers.stream().filter(server -> server.isRunning() && !server.isPaused())
                .filter(server -> server.get("lock:{" + name + "}") != null).count();
    }

    @Test
    void aLockIsSetOnEveryNodeAndReleasedFromEveryNode() {
        Service instance = service();

        LockHandle held = instance.service().lock("order:1", Duration.ofSeconds(10), Duration.ZERO);

        assertThat(nodesHolding("order:1")).isEqualTo(NODES);
        assertThat(instance.backend().quorum()).isEqualTo(3);
        assertThat(held.release()).isTrue();
        assertThat(nodesHolding("order:1")).isZero();
    }

    @Test
    void aSecondInstanceCannotTakeAHeldLockAndTakesItOnceReleased() {
        Service first = service();
        Service second = service();
        LockHandle held = first.service().lock("order:2", Duration.ofSeconds(10), Duration.ZERO);

        assertThat(second.service().tryLock("order:2", Duration.ofSeconds(10), Duration.ZERO)).isEmpty();

        held.release();
        Optional<LockHandle> next = second.service().tryLock("order:2", Duration.ofSeconds(10), Duration.ZERO);
        assertThat(next).isPresent();
        next.get().release();
    }

    @Test
    void withTwoOfFiveNodesDownLocksAreStillGranted() {
        Service instance = service();
        servers.get(0).stop();
        proxies.get(1).refuseConnections();
        proxies.get(1).resetConnections();

        LockHandle held = instance.service().lock("order:3", Duration.ofSeconds(10), Duration.ZERO);

        assertThat(held.isHeld()).isTrue();
        assertThat(nodesHolding("order:3")).isEqualTo(3);
        assertThat(held.release()).isTrue();
        assertThat(nodesHolding("order:3")).isZero();
    }

    @Test
    void withThreeOfFiveNodesDownAcquisitionFailsNamingHowManyAnsweredAndLeavesNothingBehind() {
        Service instance = service();
        for (int i = 0; i < 3; i++) {
            proxies.get(i).refuseConnections();
            proxies.get(i).resetConnections();
        }

        assertThatThrownBy(() -> instance.service().lock("order:4", Duration.ofSeconds(10), Duration.ofSeconds(2)))
                .isInstanceOfSatisfying(RedlockQuorumException.class, ex -> {
                    assertThat(ex.answered()).isEqualTo(2);
                    assertThat(ex.nodes()).isEqualTo(5);
                    assertThat(ex.quorum()).isEqualTo(3);
                    assertThat(ex).hasMessageContaining("Only 2 of 5 Redlock nodes answered the acquire")
                            .hasMessageContaining("'order:4'").hasMessageContaining("distributed-lock.redlock.nodes");
                });
        // The two nodes that granted it were given it back.
        assertThat(nodesHolding("order:4")).isZero();
    }

    @Test
    void aPausedNodeCostsAtMostTheNodeTimeoutAndLocksAreStillGranted() {
        Service instance = service();
        servers.get(4).pause();

        LockHandle held = instance.service().lock("order:5", Duration.ofSeconds(10), Duration.ZERO);

        assertThat(held.isHeld()).isTrue();
        assertThat(nodesHolding("order:5")).isEqualTo(4);
        held.release();
        servers.get(4).resume();
        // The paused node may have applied the SET when it woke up; the release-everywhere of the
        // acquisition, or the lease, takes care of it: nothing of ours may stay there for long.
        await().atMost(Duration.ofSeconds(15)).until(() -> nodesHolding("order:5") == 0);
    }

    @Test
    void aMajorityThatAnswersTooLateForTheTtlGrantsNothing() {
        Service instance = service();
        // Three nodes answer after 150 ms, inside the node timeout; with a 100 ms ttl the vote
        // succeeds on every node but the lock would already have expired: no lock.
        for (int i = 0; i < 3; i++) {
            proxies.get(i).delayAllReplies(Duration.ofMillis(150));
        }

        Optional<LockHandle> held = instance.service().tryLock(LockRequest.of("order:6")
                .withTtl(Duration.ofMillis(100)).withWaitTime(Duration.ZERO).withWatchdog(false));

        assertThat(held).isEmpty();
        for (int i = 0; i < NODES; i++) {
            proxies.get(i).delayAllReplies(Duration.ZERO);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> nodesHolding("order:6") == 0);
    }

    @Test
    void theWatchdogKeepsALockPastItsTtlOnAMajority() throws Exception {
        Service instance = service();
        LockHandle held = instance.service().lock(LockRequest.of("order:7").withTtl(Duration.ofMillis(900))
                .withWaitTime(Duration.ZERO));
        servers.get(0).stop();

        Thread.sleep(2_500);

        assertThat(held.isHeld()).isTrue();
        assertThat(nodesHolding("order:7")).isEqualTo(4);
        assertThat(instance.lost()).isEmpty();
        held.release();
    }

    @Test
    void aLockDeletedFromAMajorityBehindItsHoldersBackIsReportedLost() {
        Service instance = service();
        LockHandle held = instance.service().lock(LockRequest.of("order:8").withTtl(Duration.ofMillis(900))
                .withWaitTime(Duration.ZERO));

        for (int i = 0; i < 3; i++) {
            servers.get(i).del("lock:{order:8}");
        }

        await().atMost(Duration.ofSeconds(5)).until(() -> !held.isHeld());
        assertThat(instance.lost()).contains("order:8");
    }

    @Test
    void contendingInstancesNeverHoldALockTogether() throws Exception {
        List<Service> instances = List.of(service(), service());
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger entries = new AtomicInteger();
        ConcurrentHashMap<String, Boolean> failures = new ConcurrentHashMap<>();
        ExecutorService threads = Executors.newFixedThreadPool(8);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            Service instance = instances.get(t % 2);
            workers.add(threads.submit(() -> {
                while (System.nanoTime() < end) {
                    try {
                        Optional<LockHandle> held = instance.service().tryLock("hot", Duration.ofSeconds(5),
                                Duration.ofSeconds(2));
                        if (held.isEmpty()) {
                            continue;
                        }
                        if (inside.incrementAndGet() != 1) {
                            violations.incrementAndGet();
                        }
                        entries.incrementAndGet();
                        inside.decrementAndGet();
                        held.get().release();
                    }
                    catch (RuntimeException ex) {
                        failures.put(ex.toString(), true);
                    }
                }
            }));
        }
        for (Future<?> worker : workers) {
            worker.get(30, TimeUnit.SECONDS);
        }
        threads.shutdownNow();

        assertThat(violations).hasValue(0);
        assertThat(failures).isEmpty();
        assertThat(entries.get()).isGreaterThan(8);
        assertThat(nodesHolding("hot")).isZero();
    }
}
