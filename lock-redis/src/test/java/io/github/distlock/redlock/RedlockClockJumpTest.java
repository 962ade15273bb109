package io.github.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Redlock when the wall clock of some of its nodes jumps forward (an NTP step, a VM
 * resumed) while a lock is held. Each node expires keys by its own wall clock, so a jump
 * longer than what is left of the lease expires it there early; the holder's JVM counts
 * its validity on its own monotonic clock. Every vote and renewal answers with the node's
 * clock ({@link NodeClock}), so an application instance that has talked to a node before
 * its jump sees the jump in the reply of its next vote there, and does not count that
 * node for one longest lease.
 * <ul>
 * <li>On a minority of the nodes that is outvoted, whether the holder was granted by
 * every node or by exactly a majority: no second instance can count the jumped nodes, so
 * it gathers no majority.</li>
 * <li>On a majority, a running instance does not count the jumped nodes either, and the
 * holder is told at its next renewal that it lost the lock. An instance that first
 * connects after the jump cannot see it: that is the documented limit (docs/redlock.md,
 * docs/guarantees.md). It acquires while the first still believes it holds; its fencing
 * token is larger, so a resource that checks tokens refuses the first one's late
 * write.</li>
 * </ul>
 * Every node is a real {@code redis-server} under libfaketime
 * ({@link RedisTestServer.Builder#withFakeClock()}), each instance has its own Lettuce
 * clients, and restart protection is on, as by default.
 */
class RedlockClockJumpTest {

    /**
     * Long enough that nothing here races the watchdog's first renewal (after a third of
     * it) on a slow machine.
     */
    private static final Duration TTL = Duration.ofSeconds(12);

    /**
     * Farther than the whole lease: a jumped node has let the key go, whenever in the
     * lease it jumps.
     */
    private static final Duration JUMP = TTL.plusSeconds(1);

    // Generous: nothing here is about the node timeout, and a loaded machine can be slow
    // to answer.
    private static final Duration NODE_TIMEOUT = Duration.ofSeconds(1);

    private final List<RedisTestServer> servers = new ArrayList<>();

    private final List<AutoCloseable> instances = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable instance : instances) {
            instance.close();
        }
        servers.forEach(RedisTestServer::close);
    }

    /**
     * A jump of more than the lease on a minority of the nodes (1 of 3, 2 of 5) while a
     * lock is held. The jumped nodes drop the key at once; the second instance's attempts
     * win their votes and lose every majority, and give those grants back. The holder's
     * renewals, refused by the jumped nodes, still count on the majority.
     */
    @ParameterizedTest(name = "{1} of {0} nodes jump")
    @CsvSource({ "3, 1", "5, 2" })
    void aForwardJumpOnAMinorityOfTheNodesIsOutvotedAndTheHolderKeepsTheLock(int nodes, int jumped) {
        startNodes(nodes);
        DefaultLockService first = instance();
        DefaultLockService second = instance();
        String name = "jump:minority:" + nodes;
        // Without a token: the first one is drawn after the jump, from the nodes that
        // still hold the lock.
        LockHandle held = first.lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO));
        // Decided by the first majority; the others' grants land just after, and the jump
        // must find all of them.
        await().atMost(Duration.ofSeconds(20)).until(() -> holding(name) == nodes);

        List<RedisTestServer> jumpedNodes = servers.subList(0, jumped);
        List<RedisTestServer> steadyNodes = servers.subList(jumped, nodes);
        jumpedNodes.forEach(server -> server.jumpClock(JUMP));

        assertThat(jumpedNodes).as("the jumped nodes let the lease go, %s early", TTL)
            .allSatisfy(server -> assertThat(server.get(redisKey(name))).isNull());
        long token = held.fencingToken();
        FencedAccount account = new FencedAccount();
        assertThat(account.write("first", token)).isTrue();

        // Attempts for two seconds: each wins the jumped nodes, finds the lock on the
        // others, and gives back.
        Optional<LockHandle> attempt = second
            .tryLock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ofSeconds(2)));

        assertThat(attempt).as("the second instance, against a majority that still holds the lock").isEmpty();
        assertThat(held.isHeld()).isTrue();
        assertThat(steadyNodes).as("the nodes that did not jump")
            .allSatisfy(server -> assertThat(server.get(redisKey(name))).isNotNull());
        // The give-backs of the second instance's grants, the late ones too, leave the
        // jumped nodes empty.
        await().atMost(Duration.ofSeconds(10))
            .until(() -> jumpedNodes.stream().allMatch(server -> server.get(redisKey(name)) == null));

        // The watchdog's next renewal: the jumped nodes answer "not ours", the majority
        // renews.
        long pttlBefore = steadyNodes.get(0).pttl(redisKey(name));
        await().atMost(TTL).until(() -> steadyNodes.get(0).pttl(redisKey(name)) > pttlBefore);
        assertThat(held.isHeld()).as("held after a renewal that the jumped nodes refused").isTrue();
        assertThat(held.isLost()).isFalse();
        assertThat(second.tryLock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO))).isEmpty();

        // Tokens keep increasing across holders: the next one is drawn where the first
        // was written back.
        assertThat(held.release()).isTrue();
        LockHandle next = second
            .tryLock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ofSeconds(5)).withFencingToken())
            .orElseThrow();
        assertThat(next.fencingToken()).isGreaterThan(token);
        assertThat(account.write("second", next.fencingToken())).isTrue();
        assertThat(account.write("first, late", token)).isFalse();
        assertThat(next.release()).isTrue();
    }

    /**
     * Five nodes; the holder was granted by exactly three of them, as under contention,
     * when another instance held the other two for a moment. A jump of more than the
     * lease on two nodes, one of them the holder's: the three nodes without the lock now
     * would be a majority, and without the clock in the votes' replies a second instance
     * won them (RedlockFaultSweepTest found it). The second instance, running since
     * before the jump, sees it in its votes' replies and does not count the jumped nodes.
     */
    @Test
    void aForwardJumpOnAMinorityIsOutvotedEvenWhenItHitsAHolderGrantedByExactlyAMajority() {
        startNodes(5);
        DefaultLockService first = instance();
        DefaultLockService second = instance();
        String name = "jump:exact-majority";
        String key = redisKey(name);
        // Another owner on nodes 3 and 4 while the first instance acquires: it gets nodes
        // 0 to 2.
        servers.get(3).set(key, "another-owner");
        servers.get(4).set(key, "another-owner");
        LockHandle held = first.lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken());
        long token = held.fencingToken();
        servers.get(3).del(key);
        servers.get(4).del(key);
        assertThat(holding(name)).as("nodes holding the first lease").isEqualTo(3);

        // Node 0 is one of the holder's three; node 3 is free.
        List<RedisTestServer> jumpedNodes = List.of(servers.get(0), servers.get(3));
        jumpedNodes.forEach(server -> server.jumpClock(JUMP));
        assertThat(servers.get(0).get(key)).as("the holder's grant on the jumped node").isNull();

        Optional<LockHandle> attempt = second
            .tryLock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ofSeconds(2)).withFencingToken());

        assertThat(attempt).as("the second instance, with nodes 0, 3 and 4 free of the first lease").isEmpty();
        FencedAccount account = new FencedAccount();
        assertThat(account.write("first", token)).isTrue();
        // The holder's renewal does not count node 0 either: two of five renew, which is
        // no
        // majority, so it learns within its lease that it no longer holds the lock.
        await().atMost(TTL.multipliedBy(2)).until(() -> !held.isHeld());
        // Once the jumped nodes count again and the first lease has run out, the lock is
        // free again.
        LockHandle next = await().atMost(TTL.multipliedBy(3))
            .ignoreExceptions()
            .until(() -> second
                .tryLock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken()),
                    Optional::isPresent)
            .get();
        assertThat(next.fencingToken()).isGreaterThan(token);
        assertThat(account.write("second", next.fencingToken())).isTrue();
        assertThat(next.release()).isTrue();
    }

    /**
     * A jump of more than the lease on a majority of the nodes (2 of 3, 3 of 5) while a
     * lock is held. An instance running since before the jump sees it and cannot acquire;
     * the holder's next renewal finds the lock gone. An instance that first connects
     * after the jump has nothing to compare the nodes' clocks with and acquires at once,
     * while the first still believes it holds: this is what Redlock does not protect
     * against, as documented, and the fencing token is what stops the first holder's late
     * write.
     */
    @ParameterizedTest(name = "{1} of {0} nodes jump")
    @CsvSource({ "3, 2", "5, 3" })
    void aForwardJumpOnAMajorityLetsOnlyAnInstanceThatConnectedAfterItInAndFencingRefusesTheStaleWrite(int nodes,
            int jumped) {
        startNodes(nodes);
        DefaultLockService first = instance();
        DefaultLockService running = instance();
        String name = "jump:majority:" + nodes;
        LockHandle held = first.lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken());
        long firstToken = held.fencingToken();
        FencedAccount account = new FencedAccount();
        assertThat(account.write("first", firstToken)).isTrue();
        await().atMost(Duration.ofSeconds(20)).until(() -> holding(name) == nodes);

        servers.subList(0, jumped).forEach(server -> server.jumpClock(JUMP));

        assertThat(holding(name)).as("the nodes that still hold the first lease").isEqualTo(nodes - jumped);
        assertThat(refused(running, name)).as("an instance that saw the nodes' clocks before the jump is refused")
            .isTrue();
        DefaultLockService second = instance();
        Optional<LockHandle> stolen = second
            .tryLock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ofSeconds(2)).withFencingToken());
        assertThat(stolen).as("an instance that connected after the jump, with the jumped majority").isPresent();
        assertThat(held.isHeld()).as("the first instance still believes it holds: two holders").isTrue();
        assertThat(stolen.get().isHeld()).isTrue();

        long secondToken = stolen.get().fencingToken();
        assertThat(secondToken).isGreaterThan(firstToken);
        assertThat(account.write("second", secondToken)).isTrue();
        assertThat(account.write("first, late", firstToken)).as("the first holder's stale write").isFalse();
        assertThat(account.holder()).isEqualTo("second");

        // The first instance's next renewal: the majority answers "not ours", and the
        // handle is marked lost.
        await().atMost(TTL.multipliedBy(2)).until(held::isLost);
        assertThat(held.isHeld()).isFalse();
        assertThat(stolen.get().isHeld()).isTrue();
        assertThat(stolen.get().release()).isTrue();
    }

    /**
     * Servers that have been up for an hour, by their clocks: restart protection trusts
     * them at once.
     */
    private void startNodes(int count) {
        for (int i = 0; i < count; i++) {
            RedisTestServer server = RedisTestServer.builder().withFakeClock().start();
            servers.add(server);
            server.jumpClock(Duration.ofHours(1));
        }
    }

    /**
     * An application instance: a lock service over Lettuce clients of its own, restart
     * protection on.
     */
    private DefaultLockService instance() {
        LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(
                servers.stream().map(RedisTestServer::redisUri).toList(), NODE_TIMEOUT, "lock:", TTL, true, Set.of());
        nodes.awaitConnected(Duration.ofSeconds(10));
        RedlockBackend redlock = nodes.redlock(0.01);
        LockWaiters waiters = new LockWaiters();
        redlock.releaseHints().deliverTo(waiters);
        LeaseWatchdog watchdog = new LeaseWatchdog(redlock, 1.0 / 3);
        DefaultLockService service = new DefaultLockService(redlock, watchdog,
                new LockDefaults(TTL, Duration.ZERO, true, Duration.ofMillis(50)), waiters);
        instances.add(0, redlock);
        instances.add(0, watchdog);
        instances.add(0, service);
        return service;
    }

    /**
     * Whether {@code service} is refused the lock at once: the lock is taken where it
     * asked, or too few nodes counted ({@link RedlockQuorumException}, held back).
     */
    private static boolean refused(DefaultLockService service, String name) {
        try {
            return service.tryLock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO)).isEmpty();
        }
        catch (RedlockQuorumException ex) {
            assertThat(ex.getMessage()).contains("held back");
            return true;
        }
    }

    private long holding(String name) {
        return servers.stream().filter(server -> server.get(redisKey(name)) != null).count();
    }

    private static String redisKey(String name) {
        return "lock:{" + name + "}";
    }

    /**
     * The protected resource: it takes a write only with a fencing token above the last
     * one it took.
     */
    private static final class FencedAccount {

        private long fence;

        private String holder;

        synchronized boolean write(String writer, long token) {
            if (token <= fence) {
                return false;
            }
            fence = token;
            holder = writer;
            return true;
        }

        synchronized String holder() {
            return holder;
        }

    }

}
