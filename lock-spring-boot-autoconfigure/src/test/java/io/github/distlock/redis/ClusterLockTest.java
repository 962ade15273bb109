package io.github.distlock.redis;

import static io.github.distlock.redis.LockApplication.clusterNodes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.testsupport.RedisClusterExtension;
import io.github.distlock.testsupport.RedisTestCluster;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.RespConnection;

/**
 * The lock on a real 3-master Redis Cluster, configured as an application configures it
 * ({@code spring.data.redis.cluster.nodes}): awkward lock names, a paused master,
 * hand-over between two instances through cluster pub/sub, and a slot that migrates while
 * it is locked.
 *
 * <p>
 * Redis state is read through the fixture and found by scanning every master for keys
 * under the key prefix, so these tests do not depend on how a lock name becomes a Redis
 * key. A lock's <em>lease key</em> is a key under the prefix whose remaining lease is at
 * most the lock's ttl (companion keys such as a fencing counter live much longer).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterLockTest {

    private static final String PREFIX = "lock:";

    private static final String PREFIX_PATTERN = PREFIX + "*";

    private static final Duration TTL = Duration.ofSeconds(20);

    @RegisterExtension
    static final RedisClusterExtension clusterExtension = new RedisClusterExtension();

    private static RedisTestCluster cluster;

    private static LockApplication first;

    private static LockApplication second;

    /**
     * Properties that choose the client; none for Spring Boot's default, Lettuce.
     * {@link JedisClusterLockTest} runs every test here on Jedis.
     */
    String[] clientProperties() {
        return new String[0];
    }

    /**
     * Starts an application instance on the cluster, with the client's and the given
     * properties.
     */
    LockApplication startInstance(String... more) {
        List<String> properties = new ArrayList<>();
        properties.add(clusterNodes(cluster.hostAndPorts()));
        properties.addAll(List.of(clientProperties()));
        properties.addAll(List.of(more));
        return LockApplication.start(properties.toArray(String[]::new));
    }

    @BeforeAll
    void startTwoInstances() {
        cluster = clusterExtension.cluster();
        // A master that stops answering takes away only its own slots, as in clusters
        // that prefer
        // availability; with the default ('yes') the healthy masters would refuse every
        // key too.
        cluster.nodes().forEach(node -> node.command("CONFIG", "SET", "cluster-require-full-coverage", "no"));
        first = startInstance();
        second = startInstance();
    }

    @AfterAll
    void stopInstances() {
        if (first != null) {
            first.close();
        }
        if (second != null) {
            second.close();
        }
    }

    @BeforeEach
    void healthyEmptyCluster() {
        cluster.nodes().forEach(RedisTestServer::resume);
        cluster.awaitClusterOk(Duration.ofSeconds(30));
        // Both instances reach every master before the test: a node connection not opened
        // yet, or one a previous
        // test's pause broke, took longer to (re)connect on a busy machine than one
        // operation timeout.
        Map<RedisTestServer, String> oneNamePerMaster = new LinkedHashMap<>();
        for (int i = 0; oneNamePerMaster.size() < cluster.nodes().size() && i < 1000; i++) {
            String name = "connected:" + i;
            oneNamePerMaster.putIfAbsent(cluster.nodeForSlot(cluster.slotOf("lock:{" + name + "}")), name);
        }
        for (LockApplication instance : List.of(first, second)) {
            for (String name : oneNamePerMaster.values()) {
                await().atMost(Duration.ofSeconds(30))
                    .ignoreExceptions()
                    .until(() -> instance.lockService()
                        .tryLock(LockRequest.of(name).withWaitTime(Duration.ZERO))
                        .map(LockHandle::release)
                        .orElse(false));
            }
        }
        cluster.nodes().forEach(RedisTestServer::flushAll);
    }

    // ------------------------------------------------------------------------------------------
    // names

    static Stream<Named<String>> awkwardNames() {
        return Stream.of("a}b", "{}x}", "}", "}b", "{", "x{y}z", "line1\nline2", "ключ", "🔒")
            .map(name -> Named.of(name.replace("\n", "\\n"), name));
    }

    /**
     * A lock name is application data. Redis Cluster hashes only the first {@code {...}}
     * of a key, so braces in a name must not split the lock from its companion keys (a
     * script on both then fails with {@code CROSSSLOT}), and every name needs a key of
     * its own.
     */
    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("awkwardNames")
    void lockNamesWithBracesStayInOneSlotAndAreReleased(String name) {
        LockService a = first.lockService();
        LockService b = second.lockService();

        LockHandle held = a.lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO));
        try {
            String lockKey = theOnlyLeaseKey();
            assertThat(b.tryLock(LockRequest.of(name).withWaitTime(Duration.ZERO)))
                .as("another instance is excluded from '%s'", name)
                .isEmpty();

            long token = held.fencingToken();

            assertThat(token).isPositive();
            int slot = cluster.slotOf(lockKey);
            assertThat(cluster.keys(PREFIX_PATTERN).keySet())
                .as("the lock key %s and every companion key are in the lock's slot %d", lockKey, slot)
                .allSatisfy(key -> assertThat(cluster.slotOf(key)).as(key).isEqualTo(slot));
            assertThat(held.release()).isTrue();
            assertThat(cluster.keys(PREFIX_PATTERN)).as("released").doesNotContainKey(lockKey);

            // The other instance takes it now, with the fencing token drawn in the
            // acquisition itself.
            LockHandle next = b.lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken());
            assertThat(theOnlyLeaseKey()).as("the same name, the same key").isEqualTo(lockKey);
            assertThat(next.fencingToken()).isGreaterThan(token);
            assertThat(next.release()).isTrue();
            assertThat(leaseKeys()).as("nothing held").isEmpty();
        }
        finally {
            releaseQuietly(held);
        }
    }

    @Test
    void distinctLockNamesNeverShareAKey() {
        List<String> names = List.of("a}b", "{}x}", "}", "{", "x{y}z", "line1\nline2", "ключ", "🔒",
                // Near misses of the above, which a careless escaping of braces would map
                // onto the same key.
                "a", "a}", "{a", "{a}", "a}c", "}{", "{}", "x{y", "y}z", "line1", "lock:{a}");
        LockService a = first.lockService();
        LockService b = second.lockService();
        List<LockHandle> handles = new ArrayList<>();
        try {
            for (String name : names) {
                // Were this name's key shared with an earlier name, it would be held
                // already.
                Optional<LockHandle> handle = a.tryLock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO));
                assertThat(handle).as("'%s' is free while %d other names are held", name, handles.size()).isPresent();
                handles.add(handle.get());
            }
            for (String name : names) {
                assertThat(b.tryLock(LockRequest.of(name).withWaitTime(Duration.ZERO))).as("'%s' is held", name)
                    .isEmpty();
            }
            assertThat(leaseKeys()).as("one lease key per name").hasSize(names.size());
        }
        finally {
            handles.forEach(ClusterLockTest::releaseQuietly);
        }
    }

    // ------------------------------------------------------------------------------------------
    // a paused master

    /**
     * The watchdog renews a thousand short leases spread over every master, one script
     * per slot. A master that stops answering (SIGSTOP: its connections stay open,
     * nothing comes back) may cost the leases on it, but not those on the healthy
     * masters: their renewals must not wait behind the paused master's timeouts.
     */
    @Test
    void leasesOnHealthyMastersSurviveWhileAnotherMasterIsPaused() {
        Duration ttl = Duration.ofSeconds(3);
        int locks = 1000;
        // With the default distributed-lock.operation-timeout (2s): a renewal round that
        // waits that
        // long for the paused master before it counts the other masters' replies is too
        // late for some.
        try (LockApplication app = startInstance()) {
            LockService service = app.lockService();
            List<LockHandle> handles = new ArrayList<>(locks);
            for (int i = 0; i < locks; i++) {
                handles.add(service
                    .lock(LockRequest.of("lease:" + i).withTtl(ttl).withWaitTime(Duration.ZERO).withWatchdog(true)));
            }
            Map<String, RedisTestServer> keys = cluster.keys(PREFIX_PATTERN);
            assertThat(keys).hasSize(locks);
            RedisTestServer paused = cluster.node(1);
            Map<RedisTestServer, List<String>> healthy = new LinkedHashMap<>();
            keys.forEach((key, node) -> {
                if (node != paused) {
                    healthy.computeIfAbsent(node, n -> new ArrayList<>()).add(key);
                }
            });
            int onPaused = locks - healthy.values().stream().mapToInt(List::size).sum();
            assertThat(healthy).as("locks on every master").hasSize(2);
            assertThat(onPaused).as("locks on the paused master").isPositive();

            // Without this, once the paused master is marked failed (the 2 s node
            // timeout) the healthy
            // masters refuse every command with CLUSTERDOWN, and no client can keep a
            // lease there.
            cluster.nodes().forEach(node -> node.command("CONFIG", "SET", "cluster-require-full-coverage", "no"));
            paused.pause();
            try {
                long pausedAt = System.nanoTime();
                // For 1.5 ttl, every lease on a healthy master keeps being renewed.
                await().pollInterval(Duration.ofMillis(200)).atMost(Duration.ofSeconds(30)).until(() -> {
                    healthy.forEach((node, nodeKeys) -> {
                        long sincePause = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pausedAt);
                        Map<String, Long> expired = new LinkedHashMap<>(node.pttls(nodeKeys));
                        expired.values().removeIf(pttl -> pttl > 0);
                        assertThat(expired.size())
                            .as("leases on healthy %s that ran out %d ms after the pause, "
                                    + "of %d (PTTL of some: %s)", node, sincePause, nodeKeys.size(),
                                    expired.entrySet().stream().limit(3).toList())
                            .isZero();
                    });
                    return System.nanoTime() - pausedAt > ttl.multipliedBy(3).dividedBy(2).toNanos();
                });
                int healthyCount = locks - onPaused;
                assertThat(handles.stream().filter(LockHandle::isHeld).count())
                    .as("handles still held: at least those on the healthy masters")
                    .isGreaterThanOrEqualTo(healthyCount);
                assertThat(app.lostLeases()).as("leases reported lost: at most those on the paused master")
                    .hasSizeLessThanOrEqualTo(onPaused);
            }
            finally {
                paused.resume();
                // The other masters marked it failed; the next test needs the cluster
                // whole again, and a
                // master that serves slots loses its fail flag only a while after it
                // answers again.
                await().atMost(Duration.ofSeconds(60))
                    .until(() -> cluster.nodes()
                        .stream()
                        .noneMatch(node -> ((String) node.command("CLUSTER", "NODES")).contains("fail")));
                cluster.nodes().forEach(node -> node.command("CONFIG", "SET", "cluster-require-full-coverage", "yes"));
                cluster.awaitClusterOk(Duration.ofSeconds(30));
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // hand-over

    @Test
    void contendedLocksOnEveryMasterNeverHaveTwoHolders() throws Exception {
        List<String> names = namesOnEveryMaster("counter:");
        int threadsPerInstance = 3;
        int callsPerThread = 10;
        Map<String, CriticalSection> sections = new ConcurrentHashMap<>();
        names.forEach(name -> sections.put(name, new CriticalSection()));
        ExecutorService pool = Executors.newFixedThreadPool(2 * threadsPerInstance);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < threadsPerInstance; t++) {
                // The first instance through @DistributedLock, the second through
                // LockService.
                workers.add(pool.submit(() -> {
                    for (int call = 0; call < callsPerThread; call++) {
                        for (String name : names) {
                            first.guardedWork().run(name, () -> sections.get(name).pass());
                        }
                    }
                    return null;
                }));
                workers.add(pool.submit(() -> {
                    for (int call = 0; call < callsPerThread; call++) {
                        for (String name : names) {
                            second.lockService()
                                .callLocked(LockRequest.of(name).withWaitTime(Duration.ofSeconds(20)),
                                        () -> sections.get(name).pass());
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
        }
        finally {
            pool.shutdownNow();
        }
        sections.forEach((name, section) -> {
            assertThat(section.maxHolders.get()).as("most holders of %s at once", name).isEqualTo(1);
            assertThat(section.passes.get()).as("critical sections run on %s", name)
                .isEqualTo(2 * threadsPerInstance * callsPerThread);
        });
        assertThat(leaseKeys()).isEmpty();
    }

    /**
     * The release hands the lock over and publishes; the waiter, in the other instance,
     * subscribed through some node of the cluster, learns of it from the message. Without
     * the message it would find out at its next re-check, up to a second later (the
     * fallback poll). Most hand-overs, not all, must be prompt: a loaded machine may
     * delay a thread now and then.
     */
    @Test
    void aReleaseWakesTheWaiterInTheOtherInstanceOnEveryMaster() throws Exception {
        List<String> names = namesOnEveryMaster("handover:");
        int rounds = 6;
        long promptNanos = TimeUnit.MILLISECONDS.toNanos(250);
        Map<String, List<Long>> latencies = new ConcurrentHashMap<>();
        ExecutorService drivers = Executors.newFixedThreadPool(names.size());
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (String name : names) {
                runs.add(drivers.submit(() -> {
                    latencies.put(name, handOvers(name, rounds));
                    return null;
                }));
            }
            for (Future<?> run : runs) {
                run.get(120, TimeUnit.SECONDS);
            }
        }
        finally {
            drivers.shutdownNow();
        }
        List<Long> all = latencies.values().stream().flatMap(List::stream).toList();
        long prompt = all.stream().filter(latency -> latency < promptNanos).count();
        assertThat(prompt)
            .as("hand-overs within 250 ms of the release, of %d (latencies in ms per lock: %s)", all.size(),
                    latencies.entrySet()
                        .stream()
                        .collect(Collectors.toMap(Map.Entry::getKey,
                                e -> e.getValue().stream().map(TimeUnit.NANOSECONDS::toMillis).toList())))
            .isGreaterThanOrEqualTo(2L * all.size() / 3);
        assertThat(leaseKeys()).isEmpty();
    }

    /**
     * Hands {@code name} back and forth between the two instances: each round one holds
     * it, the other waits, and the holder releases. Returns, per round, the time from the
     * release to the waiter's acquisition.
     */
    private List<Long> handOvers(String name, int rounds) throws Exception {
        CriticalSection section = new CriticalSection();
        ExecutorService waiterPool = Executors.newSingleThreadExecutor(task -> new Thread(task, "waiter-" + name));
        List<Long> latencies = new ArrayList<>();
        try {
            for (int round = 0; round < rounds; round++) {
                LockService holder = (round % 2 == 0 ? first : second).lockService();
                LockService waiter = (round % 2 == 0 ? second : first).lockService();
                LockHandle held = holder.lock(LockRequest.of(name).withWaitTime(Duration.ofSeconds(20)));
                section.enter();
                AtomicBoolean waiting = new AtomicBoolean();
                Future<Long> acquiredAt = waiterPool.submit(() -> {
                    waiting.set(true);
                    try (LockHandle handle = waiter.lock(LockRequest.of(name).withWaitTime(Duration.ofSeconds(20)))) {
                        long at = System.nanoTime();
                        section.enter();
                        section.leave();
                        return at;
                    }
                });
                // Released once the waiter is queued in Redis, not after a pause a busy
                // machine might outlast.
                String queueKey = "lock:{" + name + "}:queue";
                await().atMost(Duration.ofSeconds(20))
                    .until(() -> waiting.get() && Long.valueOf(1)
                        .equals(cluster.nodeForSlot(cluster.slotOf(queueKey)).command("ZCARD", queueKey)));
                section.leave();
                long releasedAt = System.nanoTime();
                assertThat(held.release()).isTrue();
                latencies.add(acquiredAt.get(30, TimeUnit.SECONDS) - releasedAt);
            }
        }
        finally {
            waiterPool.shutdownNow();
        }
        assertThat(section.maxHolders.get()).as("most holders of %s at once", name).isEqualTo(1);
        assertThat(section.passes.get()).isEqualTo(2 * rounds);
        return latencies;
    }

    // ------------------------------------------------------------------------------------------
    // slot migration

    static Stream<Named<String>> topologyRefresh() {
        return Stream.of(Named.of("Spring Boot's defaults", "spring.data.redis.lettuce.cluster.refresh.adaptive=false"),
                Named.of("adaptive topology refresh", "spring.data.redis.lettuce.cluster.refresh.adaptive=true"));
    }

    /**
     * Moves the slot of a held lock to another master, then contends for it. The holder's
     * instance is configured as given; the waiting instance keeps Spring Boot's defaults
     * (no topology refresh), so it only follows {@code MOVED}.
     */
    @ParameterizedTest(name = "holder with {0}")
    @MethodSource("topologyRefresh")
    void aLockWhoseSlotMigratesStaysExclusiveAndCanBeReleasedAndTakenAgain(String refresh) throws Exception {
        String name = "migrating";
        Duration ttl = Duration.ofSeconds(3);
        try (LockApplication holder = startInstance(refresh)) {
            LockHandle held = holder.lockService()
                .lock(LockRequest.of(name).withTtl(ttl).withWaitTime(Duration.ZERO).withFencingToken());
            String lockKey = theOnlyLeaseKey();
            int slot = cluster.slotOf(lockKey);
            RedisTestServer from = cluster.nodeForSlot(slot);
            RedisTestServer to = cluster.nodes().stream().filter(node -> node != from).findFirst().orElseThrow();
            ExecutorService waiterPool = Executors.newSingleThreadExecutor();
            try {
                cluster.migrateSlot(slot, to);

                assertThat(cluster.keys(PREFIX_PATTERN)).as("the lock's keys moved with the slot")
                    .containsEntry(lockKey, to)
                    .allSatisfy((key, node) -> assertThat(node).isSameAs(to));
                Future<LockHandle> waiter = waiterPool.submit(() -> second.lockService()
                    .lock(LockRequest.of(name).withTtl(ttl).withWaitTime(Duration.ofSeconds(30))));
                long movedAt = System.nanoTime();
                // For 1.5 ttl after the move, the watchdog keeps the lease alive on the
                // new master.
                await().pollInterval(Duration.ofMillis(200)).atMost(Duration.ofSeconds(30)).until(() -> {
                    assertThat(held.isHeld()).as("held after the move").isTrue();
                    assertThat(to.pttl(lockKey)).as("lease on the new master").isPositive();
                    assertThat(first.lockService().tryLock(LockRequest.of(name).withWaitTime(Duration.ZERO)))
                        .as("another instance is excluded after the move")
                        .isEmpty();
                    assertThat(waiter).as("the waiter is still waiting").isNotDone();
                    return System.nanoTime() - movedAt > ttl.multipliedBy(3).dividedBy(2).toNanos();
                });
                long token = held.fencingToken();

                assertThat(held.release()).isTrue();

                LockHandle next = waiter.get(30, TimeUnit.SECONDS);
                assertThat(next.isHeld()).isTrue();
                assertThat(next.fencingToken()).isGreaterThan(token);
                assertThat(next.release()).isTrue();
                LockHandle again = first.lockService().lock(LockRequest.of(name).withWaitTime(Duration.ZERO));
                assertThat(cluster.keys(PREFIX_PATTERN)).containsEntry(lockKey, to);
                assertThat(again.fencingToken()).isGreaterThan(next.fencingToken());
                assertThat(again.release()).isTrue();
                assertThat(leaseKeys()).isEmpty();
                assertThat(holder.lostLeases()).isEmpty();
            }
            finally {
                waiterPool.shutdownNow();
                releaseQuietly(held);
            }
        }
    }

    /**
     * A resharding moves slots one by one; while one is half-way, Redis refuses a command
     * on several of its keys with {@code TRYAGAIN} if only some of them have moved, and
     * expects the client to retry. Here the lock's slot is left half-way while the holder
     * draws its fencing token, while a waiter arrives, and while the holder releases:
     * each must succeed once the slot has settled, as none of them is the caller's fault.
     * The slot is settled once the operation is done or Redis has refused it at least
     * once.
     */
    @Test
    void aLockCanBeFencedAwaitedAndReleasedWhileItsSlotIsHalfWayMigrated() throws Exception {
        String name = "resharded";
        LockHandle held = first.lockService().lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO));
        String lockKey = theOnlyLeaseKey();
        int slot = cluster.slotOf(lockKey);
        RedisTestServer home = cluster.nodeForSlot(slot);
        RedisTestServer away = cluster.nodes().stream().filter(node -> node != home).findFirst().orElseThrow();
        AtomicReference<Thread> waiterThread = new AtomicReference<>();
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            Future<Long> token;
            try (RedisTestCluster.SlotMigration migration = cluster.beginSlotMigration(slot, away)) {
                migration.moveKeys();
                assertThat(second.lockService().tryLock(LockRequest.of(name).withWaitTime(Duration.ZERO)))
                    .as("excluded while the slot is half-way")
                    .isEmpty();
                token = pool.submit(held::fencingToken);
                awaitRefusedOrDone(token::isDone);
            }
            assertThat(token.get(30, TimeUnit.SECONDS)).as("fencing token drawn during the migration").isPositive();

            Future<LockHandle> waiter;
            try (RedisTestCluster.SlotMigration back = cluster.beginSlotMigration(slot, home)) {
                back.moveKeys();
                waiter = pool.submit(() -> {
                    waiterThread.set(Thread.currentThread());
                    return second.lockService()
                        .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ofSeconds(30)));
                });
                awaitRefusedOrDone(() -> waiter.isDone()
                        || (waiterThread.get() != null && waiterThread.get().getState() == Thread.State.TIMED_WAITING));
            }

            Future<Boolean> released;
            try (RedisTestCluster.SlotMigration again = cluster.beginSlotMigration(slot, away)) {
                again.moveKeys();
                released = pool.submit(held::release);
                awaitRefusedOrDone(released::isDone);
            }
            assertThat(released.get(30, TimeUnit.SECONDS)).as("released during the migration").isTrue();
            LockHandle next = waiter.get(30, TimeUnit.SECONDS);
            assertThat(next.fencingToken()).isGreaterThan(token.get());
            assertThat(next.release()).isTrue();
            assertThat(leaseKeys()).isEmpty();
        }
        finally {
            pool.shutdownNow();
            releaseQuietly(held);
        }
    }

    /**
     * The watchdog keeps a lease alive while its slot is half-way to another master, and
     * after it got there, although the holder's instance learned where the slot was
     * before the move: the old master answers the renewal with {@code ASK} while the slot
     * is half-way, then with {@code MOVED}, and the renewal must follow both, not count
     * the lease failed until it runs out. (On Jedis a master's renewals go to it as one
     * pipeline, which follows no redirect itself.)
     */
    @Test
    void aWatchedLeaseIsRenewedWhileItsSlotIsHalfWayMigratedAndAfterItMoved() throws Exception {
        String name = "renewed-while-migrating";
        Duration ttl = Duration.ofSeconds(3);
        LockHandle held = first.lockService()
            .lock(LockRequest.of(name).withTtl(ttl).withWaitTime(Duration.ZERO).withWatchdog(true));
        try {
            String lockKey = theOnlyLeaseKey();
            int slot = cluster.slotOf(lockKey);
            RedisTestServer home = cluster.nodeForSlot(slot);
            RedisTestServer away = cluster.nodes().stream().filter(node -> node != home).findFirst().orElseThrow();
            long lockedAt = System.nanoTime();
            // Renewed at least once on its first master: more left than the ttl minus the
            // time since.
            await().atMost(Duration.ofSeconds(20))
                .until(() -> System.nanoTime() - lockedAt > ttl.toNanos() / 2
                        && home.pttl(lockKey) > ttl.toMillis() * 2 / 3);

            try (RedisTestCluster.SlotMigration migration = cluster.beginSlotMigration(slot, away)) {
                assertThat(migration.moveKeys()).as("keys moved to the importing master").isEqualTo(1);
                awaitKeptAlive(held, ttl, () -> pttlWhileImporting(away, lockKey));
            }
            awaitKeptAlive(held, ttl, () -> away.pttl(lockKey));

            assertThat(held.isLost()).isFalse();
            assertThat(held.release()).isTrue();
            assertThat(leaseKeys()).isEmpty();
        }
        finally {
            releaseQuietly(held);
        }
    }

    /**
     * For 1.5 ttl: the handle is held and its lease, as {@code pttl} reads it, has not
     * run out.
     */
    private static void awaitKeptAlive(LockHandle held, Duration ttl, java.util.function.LongSupplier pttl) {
        long from = System.nanoTime();
        await().pollInterval(Duration.ofMillis(200)).atMost(Duration.ofSeconds(30)).until(() -> {
            assertThat(held.isHeld()).as("held").isTrue();
            assertThat(pttl.getAsLong()).as("lease left, ms").isPositive();
            return System.nanoTime() - from > ttl.multipliedBy(3).dividedBy(2).toNanos();
        });
    }

    /**
     * PTTL of a key on the master importing its slot, which answers only after
     * {@code ASKING}.
     */
    private static long pttlWhileImporting(RedisTestServer importing, String key) {
        try (RespConnection connection = importing.openConnection()) {
            connection.command("ASKING");
            return (Long) connection.command("PTTL", key);
        }
        catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    /**
     * Waits until {@code done}, or until some master refused a command with
     * {@code TRYAGAIN}.
     */
    private static void awaitRefusedOrDone(BooleanSupplier done) {
        long refusedBefore = tryAgainReplies();
        await().atMost(Duration.ofSeconds(20)).until(() -> done.getAsBoolean() || tryAgainReplies() > refusedBefore);
    }

    private static long tryAgainReplies() {
        return cluster.nodes().stream().mapToLong(node -> node.errorReplies("TRYAGAIN")).sum();
    }

    // ------------------------------------------------------------------------------------------
    // helpers

    /**
     * Keys under the prefix, on any master, that hold a lease of at most {@link #TTL}.
     */
    private static Map<String, RedisTestServer> leaseKeys() {
        Map<String, RedisTestServer> leases = new LinkedHashMap<>();
        cluster.keys(PREFIX_PATTERN).forEach((key, node) -> {
            long pttl = node.pttl(key);
            if (pttl > 0 && pttl <= TTL.toMillis()) {
                leases.put(key, node);
            }
        });
        return leases;
    }

    private static String theOnlyLeaseKey() {
        Set<String> keys = leaseKeys().keySet();
        assertThat(keys).as("lease keys under '%s'", PREFIX).hasSize(1);
        return keys.iterator().next();
    }

    /**
     * One lock name per master, in node order, found by taking candidate locks and
     * looking where they land.
     */
    private static List<String> namesOnEveryMaster(String stem) {
        Map<RedisTestServer, String> found = new LinkedHashMap<>();
        for (int i = 0; found.size() < cluster.nodes().size() && i < 1000; i++) {
            String name = stem + i;
            try (LockHandle handle = first.lockService()
                .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO))) {
                found.putIfAbsent(leaseKeys().values().iterator().next(), name);
            }
        }
        assertThat(found).as("a name for each master").hasSameSizeAs(cluster.nodes());
        Set<String> names = new LinkedHashSet<>();
        cluster.nodes().forEach(node -> names.add(found.get(node)));
        return List.copyOf(names);
    }

    private static void releaseQuietly(LockHandle handle) {
        try {
            handle.release();
        }
        catch (RuntimeException ex) {
            // Already reported by the assertion that failed; the next test flushes the
            // cluster.
        }
    }

    /** A critical section that counts how many threads are in it at once. */
    private static final class CriticalSection {

        final AtomicInteger holders = new AtomicInteger();

        final AtomicInteger maxHolders = new AtomicInteger();

        final AtomicInteger passes = new AtomicInteger();

        void enter() {
            int now = holders.incrementAndGet();
            maxHolders.accumulateAndGet(now, Math::max);
            passes.incrementAndGet();
        }

        void leave() {
            holders.decrementAndGet();
        }

        Object pass() {
            enter();
            // Long enough for a second holder, if the lock let one in, to overlap.
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            leave();
            return null;
        }

    }

}
