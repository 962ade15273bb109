package io.github.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

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
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.RespConnection;

/**
 * Waiting for a Redlock over three real {@code redis-server} processes: a release
 * announces itself on the nodes and wakes a waiter long before its retry-delay would
 * have; without announcements (a node that refuses the subscription, another client's
 * {@code DEL}) waiters still get the lock by polling; and under contention every thread
 * gets its turn while no two hold the lock at once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedlockReleaseHintsTest {

    private static final Duration NODE_TIMEOUT = Duration.ofSeconds(1);

    /**
     * Long enough that a waiter that gets the lock well inside it can only have been
     * woken.
     */
    private static final Duration LONG_RETRY_DELAY = Duration.ofSeconds(20);

    private static final Duration LONG_TTL = Duration.ofSeconds(60);

    private final List<RedisTestServer> servers = new ArrayList<>();

    private final List<Instance> instances = new ArrayList<>();

    private final ExecutorService threads = Executors.newCachedThreadPool();

    /**
     * One application instance: a lock service on a Redlock of its own clients, with its
     * own waiters.
     */
    private record Instance(DefaultLockService service, RedlockBackend backend, LeaseWatchdog watchdog,
            LockWaiters waiters) implements AutoCloseable {

        RedlockReleaseHints hints() {
            return backend.releaseHints();
        }

        @Override
        public void close() {
            service.close();
            watchdog.close();
            backend.close();
        }
    }

    @BeforeAll
    void startNodes() {
        servers.addAll(RedisTestServer.startMany(3));
    }

    @AfterAll
    void stopNodes() {
        threads.shutdownNow();
        servers.forEach(RedisTestServer::close);
    }

    @BeforeEach
    void restartAndFlush() {
        for (RedisTestServer server : servers) {
            if (!server.isRunning()) {
                server.restart();
            }
            server.flushAll();
            server.command("ACL", "DELUSER", "deaf", "mute");
            server.command("ACL", "LOG", "RESET");
        }
    }

    @AfterEach
    void closeInstances() {
        instances.forEach(Instance::close);
        instances.clear();
    }

    private Instance instance(Duration retryDelay) {
        return instance(servers.stream().map(RedisTestServer::redisUri).toList(), retryDelay);
    }

    /**
     * An instance on {@code uris}, its release hints delivered to its waiters, warmed up.
     */
    private Instance instance(List<String> uris, Duration retryDelay) {
        LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(uris, NODE_TIMEOUT, "lock:", Duration.ofSeconds(30),
                false, Set.of());
        nodes.awaitConnected(Duration.ofSeconds(10));
        RedlockBackend backend = nodes.redlock(0.01);
        LockWaiters waiters = new LockWaiters();
        backend.releaseHints().deliverTo(waiters);
        LeaseWatchdog watchdog = new LeaseWatchdog(backend, 1.0 / 3);
        DefaultLockService service = new DefaultLockService(backend, watchdog,
                new LockDefaults(Duration.ofSeconds(30), Duration.ofSeconds(3), true, retryDelay), waiters);
        Instance created = new Instance(service, backend, watchdog, waiters);
        instances.add(created);
        await().atMost(Duration.ofSeconds(10))
            .ignoreExceptions()
            .until(() -> service.tryLock("warm-up", Duration.ofSeconds(1), Duration.ZERO)
                .map(LockHandle::release)
                .orElse(false));
        return created;
    }

    private Future<Optional<LockHandle>> waitFor(Instance waiter, String name, Duration waitTime) {
        return threads.submit(() -> waiter.service()
            .tryLock(LockRequest.of(name).withTtl(LONG_TTL).withWaitTime(waitTime).withWatchdog(false)));
    }

    private static LockHandle hold(Instance holder, String name) {
        return holder.service()
            .lock(LockRequest.of(name).withTtl(LONG_TTL).withWaitTime(Duration.ZERO).withWatchdog(false));
    }

    /**
     * The waiter's first attempt fails right after {@code started}; without a wake-up its
     * next one comes at least half the retry-delay later (the pause is random between
     * half of it and all of it, and a Redlock vote reports no holder lease to cut it
     * short). So a waiter that has the lock before that was woken by the release.
     */
    @Test
    void openingTheHintSubscriptionDoesNotHoldBackTheNodesVotes() {
        // With restart protection on, a connection event holds a node's votes back until
        // it is
        // checked again. The subscription a waiter opens is another connection of the
        // node's
        // client: it must not count, or the waiter that opened it could fail for want of
        // a majority.
        LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(
                servers.stream().map(RedisTestServer::redisUri).toList(), NODE_TIMEOUT, "lock:", Duration.ofSeconds(30),
                true, Set.of());
        try {
            nodes.awaitConnected(Duration.ofSeconds(10));
            RedlockBackend backend = nodes.redlock(0.01);
            List<Long> epochsBefore = nodes.guards().stream().map(NodeRestartGuard::epoch).toList();

            backend.releaseHints().startDelivery(backend.lockKey("guarded"));
            await().atMost(Duration.ofSeconds(10)).until(() -> backend.releaseHints().isDelivering(null));

            assertThat(nodes.guards().stream().map(NodeRestartGuard::epoch).toList())
                .as("no node's connection counted as changed")
                .isEqualTo(epochsBefore);
        }
        finally {
            nodes.close();
        }
    }

    @Test
    void aWaiterWithALongRetryDelayGetsTheLockSoonAfterAnotherInstanceReleasesIt() throws Exception {
        Instance holder = instance(Duration.ofMillis(50));
        Instance waiter = instance(LONG_RETRY_DELAY);
        LockHandle held = hold(holder, "wake:1");

        long started = System.nanoTime();
        Future<Optional<LockHandle>> waiting = waitFor(waiter, "wake:1", Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(20))
            .until(() -> waiter.waiters().waiting() == 1 && waiter.hints().isDelivering(null));
        assertThat(held.release()).isTrue();
        Optional<LockHandle> got = waiting.get(60, TimeUnit.SECONDS);
        long tookNanos = System.nanoTime() - started;

        assertThat(got).isPresent();
        assertThat(Duration.ofNanos(tookNanos)).as("woken by the release, not by its retry-delay")
            .isLessThan(LONG_RETRY_DELAY.dividedBy(2));
        got.get().release();
    }

    @Test
    void withOneNodeDownTheOtherNodesHintsStillWakeTheWaiter() throws Exception {
        Instance holder = instance(Duration.ofMillis(50));
        Instance waiter = instance(LONG_RETRY_DELAY);
        servers.get(0).stop();
        LockHandle held = hold(holder, "wake:2");

        long started = System.nanoTime();
        Future<Optional<LockHandle>> waiting = waitFor(waiter, "wake:2", Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(20))
            .until(() -> waiter.waiters().waiting() == 1 && waiter.hints().isDelivering(null));
        assertThat(held.release()).isTrue();
        Optional<LockHandle> got = waiting.get(60, TimeUnit.SECONDS);

        assertThat(got).isPresent();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("woken by the release, not by its retry-delay")
            .isLessThan(LONG_RETRY_DELAY.dividedBy(2));
        got.get().release();
    }

    /**
     * Nodes whose ACL gives the waiter's user no channel: no hint can reach it, and it
     * polls.
     */
    @Test
    void whenEveryNodeRefusesTheSubscriptionWaitersStillGetTheLockByPolling() throws Exception {
        for (RedisTestServer server : servers) {
            server.command("ACL", "SETUSER", "deaf", "on", ">deaf-password", "~*", "resetchannels", "+@all");
        }
        Instance holder = instance(Duration.ofMillis(50));
        Instance waiter = instance(servers.stream()
            .map(server -> "redis://deaf:deaf-password@" + server.host() + ":" + server.port())
            .toList(), Duration.ofMillis(200));
        LockHandle held = hold(holder, "poll:1");

        Future<Optional<LockHandle>> waiting = waitFor(waiter, "poll:1", Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(20)).until(() -> waiter.waiters().waiting() == 1);
        // Every node answered the SUBSCRIBE with NOPERM: nothing is being delivered.
        await().during(Duration.ofMillis(300))
            .atMost(Duration.ofSeconds(20))
            .until(() -> !waiter.hints().isDelivering(null));
        held.release();

        Optional<LockHandle> got = waiting.get(30, TimeUnit.SECONDS);
        assertThat(got).as("found free by polling").isPresent();
        assertThat(waiter.hints().isDelivering(null)).isFalse();
        got.get().release();
    }

    /**
     * The arbiter (node 0, the first that answers) announces the release from its release
     * script, and no other node does: one message per release for each waiting JVM, the
     * lock's key and never the token. Checked by a marker published on each node once
     * every delete has landed: a node's hint would have left with its delete, before the
     * marker.
     */
    @Test
    void theArbiterAloneAnnouncesARelease() throws Exception {
        Instance holder = instance(Duration.ofMillis(50));
        List<RespConnection> listeners = listenOnEveryNode();
        try {
            LockHandle held = holdOnEveryNode(holder, "announce:1");
            String token = servers.get(0).get("lock:{announce:1}");
            assertThat(held.release()).isTrue();
            await().atMost(Duration.ofSeconds(20))
                .until(() -> servers.stream().allMatch(server -> server.get("lock:{announce:1}") == null));
            for (RedisTestServer server : servers) {
                server.command("PUBLISH", RedlockReleaseHints.channel("lock:"), "marker");
            }

            List<?> hint = (List<?>) listeners.get(0).readReply();
            assertThat(hint.get(2).toString()).matches("[0-9a-f]{16}:lock:\\{announce:1}").doesNotContain(token);
            for (RespConnection listener : listeners) {
                assertThat(((List<?>) listener.readReply()).get(2)).as("the next message").hasToString("marker");
            }
        }
        finally {
            listeners.forEach(RespConnection::close);
        }
    }

    /**
     * When the arbiter did not release the lock (here it was deleted there behind the
     * holder's back), every node that did announces the release, with one release id, so
     * a waiter wakes once.
     */
    @Test
    void whenTheArbiterDidNotReleaseTheNodesThatDidAnnounceIt() throws Exception {
        Instance holder = instance(Duration.ofMillis(50));
        List<RespConnection> listeners = listenOnEveryNode();
        try {
            LockHandle held = holdOnEveryNode(holder, "announce:2");
            servers.get(0).del("lock:{announce:2}");
            assertThat(held.release()).isTrue();

            Set<String> hints = new HashSet<>();
            for (RespConnection listener : listeners.subList(1, listeners.size())) {
                List<?> message = (List<?>) listener.readReply();
                assertThat(message.get(0)).hasToString("message");
                hints.add(message.get(2).toString());
            }
            assertThat(hints).singleElement().asString().matches("[0-9a-f]{16}:lock:\\{announce:2}");
        }
        finally {
            listeners.forEach(RespConnection::close);
        }
    }

    /**
     * Contenders of a contended lock wait in line on the arbiter, one entry per instance
     * in arrival order, and the arbiter's release announces itself to the instance at the
     * head alone: one woken instance per release instead of every instance asking the
     * arbiter in vain. The one that gets the lock leaves the line. Behind the real waiter
     * here, an entry put in line by hand, which would be woken only by a broadcast or by
     * being at the head.
     */
    @Test
    void aReleaseWakesOnlyTheInstanceAtTheHeadOfTheArbitersLine() throws Exception {
        Instance holder = instance(Duration.ofMillis(50));
        Instance waiter = instance(Duration.ofMillis(100));
        LockHandle held = holdOnEveryNode(holder, "line:1");
        Future<Optional<LockHandle>> waiting = waitFor(waiter, "line:1", Duration.ofSeconds(30));
        // Its first attempt is a full vote; the next ones join the line once its
        // subscriptions listen.
        await().atMost(Duration.ofSeconds(10)).until(() -> line("line:1").equals(List.of(waiter.hints().waiterId())));
        joinLine("line:1", "later", System.currentTimeMillis() + 60_000);
        String everyone = RedlockReleaseHints.channel("lock:");
        try (RespConnection listener = listenOnArbiter(everyone, waiter.hints().waiterChannel(), everyone + ":later")) {
            assertThat(held.release()).isTrue();

            List<String> hint = message(listener);
            assertThat(hint.get(1)).isEqualTo(waiter.hints().waiterChannel());
            assertThat(hint.get(2)).matches("[0-9a-f]{16}:lock:\\{line:1}");
            Optional<LockHandle> got = waiting.get(30, TimeUnit.SECONDS);
            assertThat(got).isPresent();
            assertThat(line("line:1")).as("the waiter left the line with the lock").containsExactly("later");
            for (String channel : List.of(everyone, everyone + ":later")) {
                servers.get(0).command("PUBLISH", channel, "marker");
                assertThat(message(listener)).as("the next message on " + channel)
                    .containsExactly("message", channel, "marker");
            }
            got.get().release();
        }
    }

    /**
     * An instance that stopped asking (its entry's alive-until is over) or that no longer
     * listens (nobody subscribed to its channel) is passed over, and leaves the line; a
     * release that finds nobody alive and listening in line announces itself to every
     * instance.
     */
    @Test
    void aReleasePassesOverInstancesThatStoppedAskingOrListeningAndElseAnnouncesToEveryone() throws Exception {
        Instance holder = instance(Duration.ofMillis(50));
        String everyone = RedlockReleaseHints.channel("lock:");
        long farAhead = System.currentTimeMillis() + 60_000;
        try (RespConnection listener = listenOnArbiter(everyone, everyone + ":listening")) {
            joinLine("line:2", "stopped", 1);
            joinLine("line:2", "deaf", farAhead);
            joinLine("line:2", "listening", farAhead);
            assertThat(line("line:2")).containsExactly("stopped", "deaf", "listening");

            assertThat(holdOnEveryNode(holder, "line:2").release()).isTrue();
            assertThat(message(listener).get(1)).isEqualTo(everyone + ":listening");
            assertThat(line("line:2")).isEmpty();

            assertThat(holdOnEveryNode(holder, "line:2").release()).isTrue();
            assertThat(message(listener).get(1)).isEqualTo(everyone);
        }
    }

    /**
     * Puts {@code waiter} at the end of {@code name}'s wake-up line on the arbiter (node
     * 0), by hand.
     */
    private void joinLine(String name, String waiter, long aliveUntilMillis) {
        String lock = "lock:{" + name + "}";
        long last = ((List<?>) servers.get(0).command("ZRANGE", lock + ":redlock-line", "-1", "-1", "WITHSCORES"))
            .stream()
            .skip(1)
            .mapToLong(score -> Long.parseLong(String.valueOf(score)))
            .max()
            .orElse(0);
        servers.get(0).command("ZADD", lock + ":redlock-line", Long.toString(last + 1), waiter);
        servers.get(0).command("HSET", lock + ":redlock-alive", waiter, Long.toString(aliveUntilMillis));
        servers.get(0).command("PEXPIRE", lock + ":redlock-line", "60000");
        servers.get(0).command("PEXPIRE", lock + ":redlock-alive", "60000");
    }

    /** The next message a raw subscription reads, as {@code [message, channel, text]}. */
    private static List<String> message(RespConnection listener) throws IOException {
        return ((List<?>) listener.readReply()).stream().map(String::valueOf).toList();
    }

    /** The instances in {@code name}'s wake-up line on the arbiter (node 0), in order. */
    private List<String> line(String name) {
        return ((List<?>) servers.get(0).command("ZRANGE", "lock:{" + name + "}:redlock-line", "0", "-1")).stream()
            .map(String::valueOf)
            .toList();
    }

    /** A raw subscription to {@code channels} on the arbiter (node 0), confirmed. */
    private RespConnection listenOnArbiter(String... channels) throws IOException {
        RespConnection listener = RespConnection.open(servers.get(0).host(), servers.get(0).port(),
                Duration.ofSeconds(5));
        listener.send(prepend("SUBSCRIBE", channels));
        for (int i = 0; i < channels.length; i++) {
            listener.readReply();
        }
        return listener;
    }

    private static String[] prepend(String first, String[] rest) {
        String[] all = new String[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }

    /**
     * The arbiter answers after the majority and did not release the lock (here it is
     * stopped, and its release times out): once that is known, the nodes that released it
     * announce it. Had they announced at once, every release whose arbiter answered after
     * the majority would have woken every instance.
     */
    @Test
    void whenTheArbiterAnswersLateWithoutReleasingTheNodesThatDidAnnounceIt() throws Exception {
        Instance holder = instance(Duration.ofMillis(50));
        List<RespConnection> listeners = listenOnEveryNode();
        try {
            LockHandle held = holdOnEveryNode(holder, "announce:3");
            servers.get(0).pause();
            try {
                assertThat(held.release()).isTrue();
                for (RespConnection listener : listeners.subList(1, listeners.size())) {
                    assertThat(message(listener).get(2)).matches("[0-9a-f]{16}:lock:\\{announce:3}");
                }
            }
            finally {
                servers.get(0).resume();
            }
        }
        finally {
            listeners.forEach(RespConnection::close);
        }
    }

    /**
     * {@link #hold}, returning once every node has the lock (decided on a majority, the
     * last grants land after).
     */
    private LockHandle holdOnEveryNode(Instance holder, String name) {
        LockHandle held = hold(holder, name);
        await().atMost(Duration.ofSeconds(20))
            .until(() -> servers.stream().allMatch(server -> server.get("lock:{" + name + "}") != null));
        return held;
    }

    /** A raw subscription to the hint channel on each node, in node order. */
    private List<RespConnection> listenOnEveryNode() throws IOException {
        List<RespConnection> listeners = new ArrayList<>();
        for (RedisTestServer server : servers) {
            RespConnection listener = RespConnection.open(server.host(), server.port(), Duration.ofSeconds(5));
            listeners.add(listener);
            listener.send("SUBSCRIBE", RedlockReleaseHints.channel("lock:"));
            listener.readReply();
        }
        return listeners;
    }

    /**
     * A holder whose user may not publish on the hint channel (an ACL without it) still
     * releases on every node: the release script ignores the refused announcement, and a
     * waiter finds the lock by polling.
     */
    @Test
    void aHolderWhoseUserMayNotAnnounceStillReleases() throws Exception {
        for (RedisTestServer server : servers) {
            server.command("ACL", "SETUSER", "mute", "on", ">mute-password", "~*", "resetchannels", "+@all");
        }
        Instance holder = instance(servers.stream()
            .map(server -> "redis://mute:mute-password@" + server.host() + ":" + server.port())
            .toList(), Duration.ofMillis(50));
        Instance waiter = instance(Duration.ofMillis(200));
        LockHandle held = hold(holder, "mute:1");
        Future<Optional<LockHandle>> waiting = waitFor(waiter, "mute:1", Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(20)).until(() -> waiter.waiters().waiting() == 1);

        assertThat(held.release()).as("released although the announcement was refused").isTrue();
        // The refusal, swallowed by the arbiter's release script, is in its ACL log.
        await().atMost(Duration.ofSeconds(20))
            .untilAsserted(() -> assertThat(String.valueOf(servers.get(0).command("ACL", "LOG"))).contains("mute",
                    "channel", RedlockReleaseHints.channel("lock:")));
        Optional<LockHandle> got = waiting.get(30, TimeUnit.SECONDS);
        assertThat(got).isPresent();
        got.get().release();
    }

    @Test
    void aLockDeletedByAnotherClientAnnouncesNothingAndWaitersFindItByPolling() throws Exception {
        Instance holder = instance(Duration.ofMillis(50));
        Instance waiter = instance(Duration.ofMillis(200));
        hold(holder, "poll:2");

        Future<Optional<LockHandle>> waiting = waitFor(waiter, "poll:2", Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(20))
            .until(() -> waiter.waiters().waiting() == 1 && waiter.hints().isDelivering(null));
        for (RedisTestServer server : servers) {
            server.del("lock:{poll:2}");
        }

        Optional<LockHandle> got = waiting.get(30, TimeUnit.SECONDS);
        assertThat(got).isPresent();
        got.get().release();
    }

    /**
     * Two instances, three threads each, all taking the same lock again and again for a
     * few seconds, each right after its release. A non-atomic counter updated under the
     * lock sees any overlap. The retry-delay is longer than the run, so every turn comes
     * from a wake-up, and every thread must have had one: a releaser that re-takes the
     * lock at once must not starve the threads woken for its release, nor one instance
     * the other. The run starts with every thread waiting for a lock the test holds: six
     * first attempts at once could split the vote, and a split is announced by nobody
     * (the retry-delay resolves it, as in any Redlock).
     */
    @Test
    void contendingThreadsEachGetTheLockAndNeverHoldItTogether() throws Exception {
        List<Instance> both = List.of(instance(LONG_RETRY_DELAY), instance(LONG_RETRY_DELAY));
        int threadCount = 6;
        AtomicIntegerArray entries = new AtomicIntegerArray(threadCount);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        // Read and written in two steps, as an unguarded counter would be: an overlap
        // loses an update.
        AtomicLong counter = new AtomicLong();
        List<String> failures = new CopyOnWriteArrayList<>();
        LockHandle first = hold(both.get(0), "hot");
        long[] end = { Long.MAX_VALUE };
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < threadCount; t++) {
            int thread = t;
            Instance instance = both.get(t % 2);
            workers.add(threads.submit(() -> {
                while (System.nanoTime() < end[0]) {
                    try {
                        Optional<LockHandle> held = instance.service()
                            .tryLock(LockRequest.of("hot")
                                .withTtl(Duration.ofSeconds(10))
                                .withWaitTime(Duration.ofSeconds(60)));
                        if (held.isEmpty()) {
                            continue;
                        }
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        long seen = counter.get();
                        Thread.yield();
                        counter.set(seen + 1);
                        entries.incrementAndGet(thread);
                        inside.decrementAndGet();
                        held.get().release();
                    }
                    catch (RuntimeException ex) {
                        failures.add(ex.toString());
                    }
                }
            }));
        }
        await().atMost(Duration.ofSeconds(10))
            .until(() -> both.get(0).waiters().waiting() + both.get(1).waiters().waiting() == threadCount
                    && both.get(0).hints().isDelivering(null) && both.get(1).hints().isDelivering(null));
        end[0] = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
        first.release();
        for (Future<?> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }

        long total = 0;
        for (int t = 0; t < threadCount; t++) {
            total += entries.get(t);
        }
        assertThat(overlaps).as("two holders at once").hasValue(0);
        assertThat(failures).isEmpty();
        assertThat(counter.get()).as("no update lost to an overlap").isEqualTo(total);
        for (int t = 0; t < threadCount; t++) {
            assertThat(entries.get(t)).as("entries of thread %d (all: %s)", t, entries).isPositive();
        }
        assertThat(both.get(0).waiters().waiting() + both.get(1).waiters().waiting()).as("nobody left waiting")
            .isZero();
    }

}
