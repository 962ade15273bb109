package io.github.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.testsupport.RedisKeepAliveProxy;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Restart protection when a node's address starts leading to another server that has been
 * up for a long time and is empty (a DNS or VIP failover to a standby, a replaced pod),
 * behind a keep-alive proxy so that the client's connection never drops. The uptime says
 * "trust it"; the changed {@code run_id} says it may not hold the locks granted before
 * (issue 27, violation 3).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedlockIdentityChangeTest {

    private static final Duration LONGEST_LEASE = Duration.ofSeconds(3);

    private final List<RedisTestServer> primaries = new ArrayList<>();

    private final List<RedisTestServer> standbys = new ArrayList<>();

    private final List<RedisKeepAliveProxy> proxies = new ArrayList<>();

    private final List<AutoCloseable> instances = new ArrayList<>();

    @BeforeAll
    void startNodes() {
        for (int i = 0; i < 3; i++) {
            primaries.add(longRunning());
            proxies.add(RedisKeepAliveProxy.start(primaries.get(i)));
        }
        for (int i = 0; i < 2; i++) {
            standbys.add(longRunning());
        }
    }

    /**
     * An empty server whose clock says it has been up for an hour, far longer than any
     * lease here.
     */
    private static RedisTestServer longRunning() {
        RedisTestServer server = RedisTestServer.builder().withFakeClock().start();
        server.jumpClock(Duration.ofHours(1));
        return server;
    }

    @AfterAll
    void stopNodes() {
        proxies.forEach(RedisKeepAliveProxy::close);
        primaries.forEach(RedisTestServer::close);
        standbys.forEach(RedisTestServer::close);
    }

    @AfterEach
    void closeInstances() throws Exception {
        for (AutoCloseable instance : instances) {
            instance.close();
        }
        instances.clear();
    }

    private record Instance(DefaultLockService service, List<NodeRestartGuard> guards) {
    }

    /**
     * An application instance with restart protection on, through the keep-alive proxies.
     */
    private Instance instance() {
        LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(
                proxies.stream().map(RedisKeepAliveProxy::redisUri).toList(), Duration.ofSeconds(1), "lock:",
                LONGEST_LEASE, true, Set.of());
        nodes.awaitConnected(Duration.ofSeconds(10));
        RedlockBackend redlock = nodes.redlock(0.01);
        LeaseWatchdog watchdog = new LeaseWatchdog(redlock, 1.0 / 3);
        DefaultLockService service = new DefaultLockService(redlock, watchdog,
                new LockDefaults(LONGEST_LEASE, Duration.ZERO, false, Duration.ofMillis(20)), new LockWaiters());
        instances.add(redlock);
        instances.add(watchdog);
        instances.add(service);
        return new Instance(service, nodes.guards());
    }

    private static LockRequest request(String name) {
        return LockRequest.of(name).withTtl(LONGEST_LEASE).withWaitTime(Duration.ZERO).withWatchdog(false);
    }

    @Test
    void aNodeWhoseAddressNowLeadsToAnotherLongRunningEmptyServerDoesNotVoteForOneLongestLease() {
        Instance first = instance();
        Instance second = instance();
        LockHandle held = await().atMost(Duration.ofSeconds(10))
            .ignoreExceptions()
            .until(() -> first.service().tryLock(request("identity:1")), Optional::isPresent)
            .get();

        // Two of the three addresses now lead to standbys that have been up for an hour,
        // without the lock.
        proxies.get(0).switchUpstream(standbys.get(0));
        proxies.get(1).switchUpstream(standbys.get(1));
        // The second instance's checks (once a second) have read the standbys' run ids:
        // from here on, only the
        // guard's rule decides (a vote in between is the one-second window of a
        // connection that never drops).
        String standby0 = standbys.get(0).infoValue("server", "run_id");
        String standby1 = standbys.get(1).infoValue("server", "run_id");
        await().atMost(Duration.ofSeconds(10))
            .until(() -> standby0.equals(second.guards().get(0).runId())
                    && standby1.equals(second.guards().get(1).runId()));

        AtomicInteger refusedWhileHeld = new AtomicInteger();
        AtomicReference<String> twoHolders = new AtomicReference<>();
        Optional<LockHandle> next = await().atMost(Duration.ofSeconds(15))
            .pollInterval(Duration.ofMillis(20))
            .until(() -> {
                boolean heldBefore = held.isHeld();
                Optional<LockHandle> got;
                try {
                    got = second.service().tryLock(request("identity:1"));
                }
                catch (RedlockQuorumException ex) {
                    // Held back, or refused in the vote by the restarted node itself
                    // (NOSCRIPT), whichever came first.
                    assertThat(ex.getMessage()).containsAnyOf("held back", "NOSCRIPT");
                    got = Optional.empty();
                }
                if (got.isPresent() && held.isHeld()) {
                    twoHolders.compareAndSet(null,
                            "the first instance still held the lock when the second " + "took it through the standbys");
                }
                if (heldBefore && got.isEmpty()) {
                    refusedWhileHeld.incrementAndGet();
                }
                return got;
            }, Optional::isPresent);

        assertThat(twoHolders.get()).as("two holders at once").isNull();
        assertThat(refusedWhileHeld.get()).as("attempts refused while the first lease lasted").isPositive();
        assertThat(next.get().isHeld()).isTrue();
        next.get().release();
    }

}
