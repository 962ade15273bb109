package io.github.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
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
 * its validity on its own monotonic clock and does not notice.
 * <ul>
 * <li>On a minority of the nodes that is outvoted: the nodes that still hold the lock are
 * a majority, so no second application instance can gather one, the holder keeps renewing
 * on that majority, and fencing tokens keep increasing.</li>
 * <li>On a majority it is the documented limit of Redlock (docs/redlock.md,
 * docs/guarantees.md): a second instance acquires while the first still believes it
 * holds, until the first's next renewal finds the lock gone. The second holder's fencing
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
     * A jump of more than the lease on a majority of the nodes (2 of 3, 3 of 5) while a
     * lock is held: a second instance acquires at once, while the first still believes it
     * holds. This is what Redlock does not protect against, as documented; the fencing
     * token is what stops the first holder's late write. The first learns it at its
     * watchdog's next renewal, which a majority refuses.
     */
    @ParameterizedTest(name = "{1} of {0} nodes jump")
    @CsvSource({ "3, 2", "5, 3" })
    void aForwardJumpOnAMajorityLetsASecondInstanceInWhileTheFirstStillHoldsAndFencingRefusesTheStaleWrite(int nodes,
            int jumped) {
        startNodes(nodes);
        DefaultLockService first = instance();
        DefaultLockService second = instance();
        String name = "jump:majority:" + nodes;
        LockHandle held = first.lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken());
        long firstToken = held.fencingToken();
        FencedAccount account = new FencedAccount();
        assertThat(account.write("first", firstToken)).isTrue();
        await().atMost(Duration.ofSeconds(20)).until(() -> holding(name) == nodes);

        servers.subList(0, jumped).forEach(server -> server.jumpClock(JUMP));

        assertThat(holding(name)).as("the nodes that still hold the first lease").isEqualTo(nodes - jumped);
        Optional<LockHandle> stolen = second
            .tryLock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ofSeconds(2)).withFencingToken());
        assertThat(stolen).as("the second instance, with the jumped majority").isPresent();
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
