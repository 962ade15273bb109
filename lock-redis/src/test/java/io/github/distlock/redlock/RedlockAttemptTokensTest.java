package io.github.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
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
import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.HandleTokens;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.testsupport.RedisCommandMatcher;
import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * A waiting {@code lock()} call makes several Redlock attempts. Each attempt has a token
 * of its own, so a grant left on a node by an earlier attempt (its answer came too late,
 * its give-back never got there) is never counted as a vote of a later one, and an
 * earlier attempt's give-back never deletes what a later one counted. Three real nodes,
 * each behind a fault proxy, with a short node timeout.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedlockAttemptTokensTest {

    private static final int NODES = 3;

    private static final Duration NODE_TIMEOUT = Duration.ofMillis(150);

    private final List<RedisTestServer> servers = new ArrayList<>();

    private final List<RedisFaultProxy> proxies = new ArrayList<>();

    private final List<AutoCloseable> closeAfterEach = new ArrayList<>();

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
            proxies.get(i).heal();
            servers.get(i).flushAll();
        }
    }

    @AfterEach
    void closeInstances() throws Exception {
        for (AutoCloseable closeable : closeAfterEach) {
            closeable.close();
        }
        closeAfterEach.clear();
    }

    /**
     * One application instance: a lock service on a Redlock of its own clients, through
     * the fault proxies.
     */
    private DefaultLockService instance() {
        LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(
                proxies.stream().map(RedisFaultProxy::redisUri).toList(), NODE_TIMEOUT, "lock:", Duration.ofSeconds(30),
                false, Set.of());
        nodes.awaitConnected(Duration.ofSeconds(10));
        DefaultLockService service = service(nodes.redlock(0.01));
        // A majority answers before the test's first vote (a cold connect can outlast the
        // node timeout).
        await().atMost(Duration.ofSeconds(10))
            .ignoreExceptions()
            .until(() -> service.tryLock("warm-up", Duration.ofSeconds(1), Duration.ZERO)
                .map(LockHandle::release)
                .orElse(false));
        return service;
    }

    private DefaultLockService service(RedlockBackend redlock) {
        LeaseWatchdog watchdog = new LeaseWatchdog(redlock, 1.0 / 3);
        DefaultLockService service = new DefaultLockService(redlock, watchdog,
                new LockDefaults(Duration.ofSeconds(30), Duration.ofSeconds(3), false, Duration.ofMillis(20)),
                new LockWaiters());
        closeAfterEach.add(redlock);
        closeAfterEach.add(watchdog);
        closeAfterEach.add(service);
        return service;
    }

    private static LockRequest request(String name, Duration ttl, Duration waitTime) {
        return LockRequest.of(name).withTtl(ttl).withWaitTime(waitTime).withWatchdog(false);
    }

    /**
     * Issue 27, violation 1. Another owner holds nodes 0 and 1. The waiter's first
     * attempt sets the lock on node 2, whose answer never comes (the connection hangs),
     * so neither that grant nor its give-back is ever seen there. Once the owner gives
     * node 0 up and node 2 answers again, the waiter's next attempt wins nodes 0 and 2.
     * With one token for every attempt, node 2's "granted" was the first attempt's grant,
     * over a second old, and the waiter counted a full lease from its last attempt: it
     * still believed it held the lock after node 2's lease had run out, and a second
     * client took nodes 1 and 2 while it did.
     */
    @Test
    void aGrantLeftOnANodeByAnEarlierAttemptNeverCountsAsAVoteOfALaterOne() throws Exception {
        DefaultLockService waiter = instance();
        DefaultLockService next = instance();
        String name = "order:leftover";
        String key = "lock:{" + name + "}";
        servers.get(0).command("SET", key, "other-owner", "PX", "60000");
        servers.get(1).command("SET", key, "other-owner", "PX", "60000");
        proxies.get(2).onNext(RedisCommandMatcher.named("SET").withArgument(1, key)).dropReplyAndHang();

        Duration ttl = Duration.ofSeconds(3);
        CompletableFuture<LockHandle> waiting = CompletableFuture
            .supplyAsync(() -> waiter.lock(request(name, ttl, Duration.ofSeconds(20))));
        // The first attempt's grant has been on node 2 for over a second.
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            long pttl = servers.get(2).pttl(key);
            return pttl > 0 && pttl < ttl.toMillis() - 1_200;
        });
        servers.get(0).del(key);
        proxies.get(2).heal();
        LockHandle held = waiting.get(30, TimeUnit.SECONDS);

        // The waiter's majority is nodes 0 and 2 (node 1 is still the other owner's).
        // Once node 2's
        // lease is over, the waiter must no longer believe it holds the lock.
        await().atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(5))
            .until(() -> servers.get(2).get(key) == null);
        boolean heldAfterTheMajorityLapsed = held.isHeld();
        servers.get(1).del(key);
        Optional<LockHandle> second = next.tryLock(request(name, ttl, Duration.ZERO));
        boolean bothHeld = second.isPresent() && held.isHeld();

        assertThat(heldAfterTheMajorityLapsed)
            .as("the waiter still believed it held the lock after node 2's " + "lease ran out")
            .isFalse();
        assertThat(bothHeld).as("two holders at once").isFalse();
        second.ifPresent(LockHandle::release);
    }

    /**
     * A node whose acquire answer comes after the node timeout: the attempt fails without
     * it, and its give-back is not sent to a node with a command outstanding past the
     * node timeout. The acquire ran all the same. Its timeout, when it comes, may hide a
     * grant, so the give-back is sent then, behind the acquire on the same connection;
     * before, the key stayed on that node, owned by nobody, for its whole ttl.
     */
    @Test
    void aGrantWhoseAnswerCameAfterTheNodeTimeoutIsGivenBackWhenItsCommandEnds() {
        DefaultLockService waiter = instance();
        String name = "order:late-answer";
        String key = "lock:{" + name + "}";
        servers.get(0).command("SET", key, "other-owner", "PX", "60000");
        servers.get(1).command("SET", key, "other-owner", "PX", "60000");
        proxies.get(2).onNext(RedisCommandMatcher.named("SET").withArgument(1, key)).delayReply(Duration.ofMillis(600));

        assertThat(waiter.tryLock(request(name, Duration.ofSeconds(60), Duration.ZERO))).isEmpty();

        await().atMost(Duration.ofSeconds(5)).until(() -> servers.get(2).get(key) == null);
        assertThat(servers.get(0).get(key)).isEqualTo("other-owner");
    }

    /**
     * A failed attempt's give-back to a node asked on the fan-out threads (here one whose
     * release runs only after the next attempt's acquire there, as on a node that is
     * still connecting) lands after the next attempt counted that node. With one token
     * for both attempts it deleted the grant the winner counted, leaving the winner with
     * one node of three; with a token per attempt it finds another attempt's token there
     * and deletes nothing.
     */
    @Test
    void aFailedAttemptsGiveBackThatLandsLateNeverDeletesAGrantALaterAttemptCounted() throws Exception {
        LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(
                servers.stream().map(RedisTestServer::redisUri).toList(), Duration.ofMillis(500), "lock:",
                Duration.ofSeconds(30), false, Set.of());
        nodes.awaitConnected(Duration.ofSeconds(10));
        String name = "order:give-back";
        String key = "lock:{" + name + "}";
        servers.get(0).command("SET", key, "other-owner", "PX", "60000");
        servers.get(1).command("SET", key, "other-owner", "PX", "60000");
        List<FencingLockBackend> route = new ArrayList<>(nodes.backends());
        GiveBackAfterTheNextAcquire lastNode = new GiveBackAfterTheNextAcquire(nodes.backends().get(2),
                () -> servers.get(0).del(key));
        route.set(2, lastNode);
        DefaultLockService waiter = service(
                new RedlockBackend(route, nodes.names(), "lock:", Duration.ofMillis(500), 0.01, null, null, nodes));

        LockHandle held = waiter.lock(request(name, Duration.ofSeconds(30), Duration.ofSeconds(10)));
        assertThat(lastNode.firstGiveBackRan.await(10, TimeUnit.SECONDS)).isTrue();

        // The waiter won nodes 0 and 2, and its handle has the winning attempt's token,
        // which both still hold
        // once the stale give-back ran.
        assertThat(held.isHeld()).isTrue();
        assertThat(servers.get(0).get(key)).isEqualTo(HandleTokens.tokenOf(held));
        assertThat(servers.get(2).get(key)).as("node 2 after the earlier attempt's give-back")
            .isEqualTo(HandleTokens.tokenOf(held));
        assertThat(held.release()).isTrue();
    }

    /**
     * A node asked on the fan-out threads whose first release (a failed attempt's
     * give-back) runs only once the next acquire there has answered; the first release
     * also lets the other owner give node 0 up, so that the next attempt can win.
     */
    private static final class GiveBackAfterTheNextAcquire implements FencingLockBackend {

        private final FencingLockBackend node;

        private final Runnable onFirstGiveBack;

        private final AtomicInteger acquires = new AtomicInteger();

        private final AtomicInteger releases = new AtomicInteger();

        private final CountDownLatch nextAcquireAnswered = new CountDownLatch(1);

        final CountDownLatch firstGiveBackRan = new CountDownLatch(1);

        GiveBackAfterTheNextAcquire(FencingLockBackend node, Runnable onFirstGiveBack) {
            this.node = node;
            this.onFirstGiveBack = onFirstGiveBack;
        }

        @Override
        public LockKey lockKey(String name) {
            return node.lockKey(name);
        }

        @Override
        public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
            AcquireResult result = node.tryAcquire(key, token, ttlMillis);
            if (acquires.incrementAndGet() == 2) {
                nextAcquireAnswered.countDown();
            }
            return result;
        }

        @Override
        public boolean release(LockKey key, String token) {
            if (releases.incrementAndGet() > 1) {
                return node.release(key, token);
            }
            onFirstGiveBack.run();
            try {
                nextAcquireAnswered.await(10, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            boolean deleted = node.release(key, token);
            firstGiveBackRan.countDown();
            return deleted;
        }

        @Override
        public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
            node.renew(renewals, outcomes);
        }

        @Override
        public long issueFencingToken(LockKey key, String token, long ttlMillis) {
            return node.issueFencingToken(key, token, ttlMillis);
        }

    }

}
