package io.github.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.testsupport.RedisKeepAliveProxy;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * A node that restarts empty behind a keep-alive proxy (twemproxy, Envoy's Redis proxy):
 * the client's connection never drops, so no connection event holds the node back, and
 * before issue 27 its grants counted until the next {@code INFO} check (violation 2). Now
 * every vote runs as this client's own script, which the restarted node does not have: it
 * answers {@code NOSCRIPT} in the round trip of the vote. The checks that do not follow
 * an event are made to run once an hour here, so that only the vote itself can catch the
 * restart.
 */
class RedlockKeepAliveRestartTest {

    private static final Duration LONGEST_LEASE = Duration.ofSeconds(3);

    private final List<RedisTestServer> servers = new ArrayList<>();

    private final List<RedisKeepAliveProxy> proxies = new ArrayList<>();

    private final List<AutoCloseable> instances = new ArrayList<>();

    @BeforeEach
    void startNodes() {
        for (int i = 0; i < 3; i++) {
            // Up for two hours by its clock, longer than any lease here, so that its
            // votes count at once.
            RedisTestServer server = longRunning();
            servers.add(server);
            proxies.add(RedisKeepAliveProxy.start(server));
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable instance : instances) {
            instance.close();
        }
        proxies.forEach(RedisKeepAliveProxy::close);
        servers.forEach(RedisTestServer::close);
    }

    private record Instance(DefaultLockService service, List<NodeRestartGuard> guards) {
    }

    /**
     * An application instance with restart protection on, through the keep-alive proxies.
     */
    private Instance instance() {
        return instance(LONGEST_LEASE);
    }

    private Instance instance(Duration longestLease) {
        LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(
                proxies.stream().map(RedisKeepAliveProxy::redisUri).toList(), Duration.ofSeconds(1), "lock:",
                longestLease, true, Set.of(), Duration.ofHours(1));
        nodes.awaitConnected(Duration.ofSeconds(10));
        RedlockBackend redlock = nodes.redlock(0.01);
        LeaseWatchdog watchdog = new LeaseWatchdog(redlock, 1.0 / 3);
        DefaultLockService service = new DefaultLockService(redlock, watchdog,
                new LockDefaults(LONGEST_LEASE, Duration.ZERO, false, Duration.ofMillis(20)), new LockWaiters());
        instances.add(redlock);
        instances.add(watchdog);
        instances.add(service);
        await().atMost(Duration.ofSeconds(10)).until(() -> nodes.guards().stream().allMatch(NodeRestartGuard::votes));
        return new Instance(service, nodes.guards());
    }

    private static LockRequest request(String name) {
        return LockRequest.of(name).withTtl(LONGEST_LEASE).withWaitTime(Duration.ZERO).withWatchdog(false);
    }

    @Test
    void aMajorityRestartedEmptyBehindKeepAliveProxiesIsRefusedInTheRoundTripOfItsVote() {
        Instance first = instance();
        Instance second = instance();
        LockHandle held = first.service().tryLock(request("restart:1")).orElseThrow();

        proxies.get(0).restartUpstream();
        proxies.get(1).restartUpstream();
        assertThat(proxies).allSatisfy(proxy -> assertThat(proxy.acceptedConnections())
            .as("the clients' connections to %s never dropped", proxy)
            .isEqualTo(proxy.openConnections()));

        // Nothing told the second instance of the restarts: its first vote is where it
        // learns of them.
        assertThatThrownBy(() -> second.service().tryLock(request("restart:1")))
            .isInstanceOf(RedlockQuorumException.class)
            .hasMessageContaining("NOSCRIPT");
        assertThat(held.isHeld()).isTrue();

        // From then on the restarted nodes are held back for one longest lease: never two
        // holders while the
        // first lease lasts, and the lock is free again once it is over.
        AtomicInteger refusedWhileHeld = new AtomicInteger();
        AtomicReference<String> twoHolders = new AtomicReference<>();
        Optional<LockHandle> next = await().atMost(Duration.ofSeconds(15))
            .pollInterval(Duration.ofMillis(20))
            .until(() -> {
                boolean heldBefore = held.isHeld();
                Optional<LockHandle> got;
                try {
                    got = second.service().tryLock(request("restart:1"));
                }
                catch (RedlockQuorumException ex) {
                    got = Optional.empty();
                }
                if (got.isPresent() && held.isHeld()) {
                    twoHolders.compareAndSet(null, "the first instance still held the lock when the second "
                            + "took it through the restarted nodes");
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

    @Test
    void anAddressThatLeadsBackToAServerUsedBeforeIsRefusedInTheRoundTripOfItsVote() {
        Instance first = instance();
        Instance second = instance();
        List<RedisTestServer> standbys = List.of(longRunning(), longRunning());
        servers.addAll(standbys);
        proxies.get(0).switchUpstream(standbys.get(0));
        proxies.get(1).switchUpstream(standbys.get(1));
        // Both instances learn of the standbys from their votes, and count them once the
        // hold-back is over.
        for (Instance instance : List.of(first, second)) {
            await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(50))
                .ignoreExceptions()
                .until(() -> instance.service().tryLock(request("back:warm-up")), Optional::isPresent)
                .get()
                .release();
        }
        LockHandle held = first.service().tryLock(request("back:1")).orElseThrow();

        // The addresses lead back to the first servers, which still have every script
        // loaded there before, and
        // which never held back:1.
        proxies.get(0).switchUpstream(servers.get(0));
        proxies.get(1).switchUpstream(servers.get(1));
        assertThatThrownBy(() -> second.service().tryLock(request("back:1"))).isInstanceOf(RedlockQuorumException.class)
            .hasMessageContaining("NOSCRIPT");
        assertThat(held.isHeld()).isTrue();
    }

    /** An empty server whose clock says it has been up for two hours. */
    private static RedisTestServer longRunning() {
        RedisTestServer server = RedisTestServer.builder().withFakeClock().start();
        server.jumpClock(Duration.ofHours(2));
        return server;
    }

    @Test
    void aNodeWhoseScriptsWereFlushedButDidNotRestartVotesAgainOnceChecked() {
        // Were a flush taken for a restart, node 0 would be held back for this hour.
        Instance instance = instance(Duration.ofHours(1));
        servers.get(0).command("SCRIPT", "FLUSH");

        // The vote finds the flush on node 0, and the check that follows finds the same
        // run_id, up for two hours.
        // Nodes 1 and 2 still make a majority meanwhile.
        instance.service().tryLock(request("flush:1")).orElseThrow().release();
        proxies.get(1).close();
        LockHandle handle = await().atMost(Duration.ofSeconds(10))
            .ignoreExceptions()
            .until(() -> instance.service().tryLock(request("flush:1")), Optional::isPresent)
            .get();
        assertThat(handle.isHeld()).isTrue();
        handle.release();
    }

}
