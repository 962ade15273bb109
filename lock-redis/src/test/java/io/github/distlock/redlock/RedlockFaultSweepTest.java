package io.github.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;
import java.util.stream.Collectors;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.HandleTokens;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisKeepAliveProxy;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Redlock under random faults, alone and combined, while two application instances
 * contend for a few keys, and the history checked after every case.
 *
 * <p>
 * The setup: five {@code redis-server} nodes under libfaketime, each with an hour of
 * uptime on its clock so that restart protection (on, as by default) trusts them. Nodes 0
 * to 2 sit behind a {@link RedisKeepAliveProxy} (a client never sees them restart) with
 * an empty standby each to switch to; nodes 3 and 4 are reached directly (a restart drops
 * the client's connection). Each instance has its own {@link LettuceRedlockNodes}, lock
 * service and watchdog, and reaches every node through a {@link RedisFaultProxy} of its
 * own, so a partition or a slow link can hit one instance only. Three threads per
 * instance run tryLock, fencingToken, writes to a fenced resource and release, on two
 * keys of their own per case.
 *
 * <p>
 * Faults ({@link FaultKind}): reply delays around the node timeout, pauses (SIGSTOP),
 * kills and empty restarts directly and behind the keep-alive proxy, switches of a
 * keep-alive proxy to an empty standby, partitions (a fault proxy's black hole), and
 * forward clock jumps on a minority, stepped back later. A jump on a majority is left
 * out: that is the documented limit ({@link RedlockClockJumpTest}).
 *
 * <p>
 * After each case:
 * <ul>
 * <li>no two handles of a key were held at once, by their own
 * {@link LockHandle#isHeld()}, sampled every 2 ms and around every write, on this JVM's
 * one monotonic clock;</li>
 * <li>the fenced resource (it takes a write only with a token at least the highest it
 * took) shows no write refused to a handle that still reported the lock held afterwards,
 * and no two holders writing in turn while both held, clock jumps on a minority included
 * (an instance sees a jump in its votes' replies and does not count the node, even when
 * the jump hits a holder granted by exactly a majority);</li>
 * <li>fencing tokens strictly increase in the order the handles were first seen
 * held;</li>
 * <li>once every handle is released and the faults are healed, no key stays on a majority
 * of the nodes for longer than its ttl;</li>
 * <li>the key can be taken again, with a token above all before (a liveness figure, not a
 * violation).</li>
 * </ul>
 *
 * <p>
 * The default run is the short sweep: every fault kind alone at its widest (a majority
 * where that is allowed) and a few combinations, 60 to 90 s, from a fixed seed. The long
 * sweep runs random cases from a printed seed for as long as asked, and prints the cases,
 * the faults tried by kind and the violations:
 *
 * <pre>
 * ./mvnw -B -o -pl lock-redis -am test -Dtest=RedlockFaultSweepTest \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Dredlock.sweep.long=true -Dredlock.sweep.minutes=10 \
 *     [-Dredlock.sweep.seed=42]
 * </pre>
 *
 * Every case prints its seed and faults;
 * {@code -Dredlock.sweep.caseSeed=<seed> -Dredlock.sweep.faults=<KIND,...>} (with
 * {@code -Dredlock.sweep.widest=true} if it says so, and
 * {@code -Dredlock.sweep.repeat=<n>} to run it n times) runs that case again under the
 * long flag. The faults' nodes, times and sizes come from the case seed; the threads'
 * interleaving does not, so a rerun replays the faults, not the exact history. The output
 * goes to
 * {@code target/surefire-reports/io.github.distlock.redlock.RedlockFaultSweepTest-output.txt}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedlockFaultSweepTest {

    private static final int NODES = 5;

    private static final int QUORUM = NODES / 2 + 1;

    /**
     * Nodes 0 .. KEEP_ALIVE_NODES-1 are behind keep-alive proxies; the others are reached
     * directly.
     */
    private static final int KEEP_ALIVE_NODES = 3;

    private static final int INSTANCES = 2;

    private static final int THREADS_PER_INSTANCE = 3;

    private static final int KEYS_PER_CASE = 2;

    private static final Duration NODE_TIMEOUT = Duration.ofMillis(200);

    /**
     * Every lease; also the longest lease, so a restarted node is held back this long.
     */
    private static final Duration TTL = Duration.ofSeconds(2);

    private static final List<Duration> WAIT_TIMES = List.of(Duration.ZERO, Duration.ofMillis(200),
            Duration.ofSeconds(1));

    /**
     * How long the contenders go on after the last fault ended: what a fault leaves
     * behind shows here.
     */
    private static final long AFTER_FAULTS_MILLIS = 1_000;

    /**
     * Beyond the ttl, how long a key may stay on a majority once all is released and
     * healed: a slow machine.
     */
    private static final Duration KEY_LEFT_SLACK = Duration.ofMillis(1_500);

    /**
     * Every server's clock runs this far ahead, so that it has been up that long by its
     * uptime.
     */
    private static final Duration CLOCK_OFFSET = Duration.ofHours(1);

    private static final long MONITOR_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private static final long SHORT_SEED = 20261127L;

    private static final int SHORT_COMBINED_CASES = 4;

    private final List<Node> nodes = new ArrayList<>();

    private final List<Instance> instances = new ArrayList<>();

    private final Figures figures = new Figures();

    private final AtomicInteger caseNumbers = new AtomicInteger();

    private ExecutorService contenders;

    private ExecutorService faultThreads;

    private long startedNanos;

    @BeforeAll
    void startNodesAndInstances() {
        startedNanos = System.nanoTime();
        contenders = Executors.newCachedThreadPool(daemon("rsweep-contender"));
        faultThreads = Executors.newCachedThreadPool(daemon("rsweep-fault"));
        for (int i = 0; i < NODES; i++) {
            nodes.add(new Node(i, i < KEEP_ALIVE_NODES));
        }
        for (int i = 0; i < INSTANCES; i++) {
            instances.add(new Instance(String.valueOf((char) ('A' + i)), nodes));
        }
        awaitHealthy();
    }

    @AfterAll
    void stop() {
        for (Instance instance : instances) {
            instance.close();
        }
        nodes.forEach(Node::close);
        if (contenders != null) {
            contenders.shutdownNow();
            faultThreads.shutdownNow();
        }
        System.out.printf(Locale.ROOT, "Redlock fault sweep: %.1f s in all%n",
                (System.nanoTime() - startedNanos) / 1e9);
        System.out.println(figures.report());
    }

    /**
     * Every fault kind alone at its widest, then a few combinations, from a fixed seed.
     * Today the keep-alive restarts and switches of a majority may find two holders
     * (issue 27, violation 2: such a node votes until the once-a-second check); they stay
     * in, and so does this test's verdict on them.
     */
    @Test
    @DisabledIfSystemProperty(named = "redlock.sweep.long", matches = "true")
    void everyFaultAloneAndCombinedKeepsOneHolderIncreasingTokensAndNoOrphanedKey() {
        Random random = new Random(SHORT_SEED);
        System.out.println("Short Redlock fault sweep, seed " + SHORT_SEED);
        List<String> reports = new ArrayList<>();
        for (FaultKind kind : FaultKind.values()) {
            reports.addAll(runCase(CasePlan.of(random.nextLong(), List.of(kind), true)));
        }
        for (int i = 0; i < SHORT_COMBINED_CASES; i++) {
            reports.addAll(runCase(CasePlan.of(random.nextLong(),
                    randomKinds(random, List.of(FaultKind.values()), 2 + random.nextInt(2)), false)));
        }
        assertThat(reports).as("violations of the short Redlock fault sweep, seed " + SHORT_SEED).isEmpty();
    }

    @Test
    @EnabledIfSystemProperty(named = "redlock.sweep.long", matches = "true")
    void randomFaultsForAsLongAsAskedKeepOneHolderIncreasingTokensAndNoOrphanedKey() {
        long seed = Long.getLong("redlock.sweep.seed", System.currentTimeMillis());
        Long caseSeed = Long.getLong("redlock.sweep.caseSeed");
        double minutes = Double.parseDouble(System.getProperty("redlock.sweep.minutes", "5"));
        long deadline = System.nanoTime() + (long) (minutes * 60e9);
        List<String> reports = new ArrayList<>();
        if (caseSeed != null) {
            List<FaultKind> kinds = selectedKinds();
            boolean widest = Boolean.getBoolean("redlock.sweep.widest");
            int repeat = Integer.getInteger("redlock.sweep.repeat", 1);
            System.out.println(
                    "Rerunning Redlock sweep case seed " + caseSeed + " with " + kinds + " " + repeat + " time(s)");
            for (int i = 0; i < repeat; i++) {
                reports.addAll(runCase(CasePlan.of(caseSeed, kinds, widest)));
            }
        }
        else {
            System.out.printf(Locale.ROOT, "Long Redlock fault sweep: seed %d, %.1f min; rerun with "
                    + "-Dredlock.sweep.long=true -Dredlock.sweep.seed=%d%n", seed, minutes, seed);
            List<FaultKind> pool = System.getProperty("redlock.sweep.faults", "").isBlank()
                    ? List.of(FaultKind.values()) : selectedKinds();
            Random random = new Random(seed);
            do {
                int count = Math.min(pool.size(), random.nextInt(3) == 0 ? 1 : 2 + random.nextInt(2));
                reports.addAll(runCase(CasePlan.of(random.nextLong(), randomKinds(random, pool, count), false)));
            }
            while (System.nanoTime() - deadline < 0);
        }
        // The figures are printed once all is closed (stop()).
        assertThat(reports)
            .as("violations of the long Redlock fault sweep, "
                    + (caseSeed != null ? "case seed " + caseSeed : "seed " + seed))
            .isEmpty();
    }

    /**
     * The checks must be able to fail: two handles held at once, tokens out of order, a
     * key left on a majority.
     */
    @Test
    void theChecksReportTwoHoldersTokensOutOfOrderAFencedHolderThatStillHeldAndAKeyLeftOnAMajority() {
        SweepCase sweepCase = new SweepCase(0, CasePlan.of(1, List.of(FaultKind.REPLY_DELAY), false),
                List.of("rsweep:self-test"));
        String key = sweepCase.keys.get(0);
        long t = System.nanoTime();
        Hold first = sweepCase.history.synthetic("A#1", key, t, t + 1_000_000, 7);
        Hold second = sweepCase.history.synthetic("B#1", key, t + 500_000, t + 2_000_000, 5);
        assertThat(sweepCase.resource.write(second, 5, t + 600_000)).isTrue();
        assertThat(sweepCase.resource.write(first, 7, t + 800_000)).isTrue();
        assertThat(sweepCase.resource.write(second, 5, t + 1_500_000)).isFalse();
        for (int i = 0; i < QUORUM; i++) {
            nodes.get(i).current().command("SET", redisKey(key), "nobody", "PX", "60000");
        }
        try {
            sweepCase.checkHistory();
            checkNoKeyLeft(sweepCase, Duration.ofMillis(200));
        }
        finally {
            for (Node node : nodes) {
                node.current().del(redisKey(key));
            }
        }

        assertThat(sweepCase.violations).hasSize(5)
            .satisfiesExactlyInAnyOrder(overlap -> assertThat(overlap).startsWith("two holders at once"),
                    interleaving -> assertThat(interleaving).startsWith("two holders wrote in turn"),
                    order -> assertThat(order).startsWith("fencing tokens out of grant order"),
                    refused -> assertThat(refused).startsWith("a write refused by the fence"),
                    left -> assertThat(left).startsWith("key left on a majority"));
    }

    // ------------------------------------------------------------------------------------------------
    // one case

    private List<String> runCase(CasePlan plan) {
        awaitHealthy();
        int number = caseNumbers.incrementAndGet();
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < KEYS_PER_CASE; k++) {
            keys.add("rsweep:" + number + ":" + k);
        }
        SweepCase sweepCase = new SweepCase(number, plan, keys);
        figures.caseRun(plan);
        Thread monitor = new Thread(() -> monitor(sweepCase), "rsweep-monitor-" + number);
        monitor.setDaemon(true);
        monitor.start();
        List<Future<?>> threads = new ArrayList<>();
        for (Instance instance : instances) {
            for (int t = 0; t < THREADS_PER_INSTANCE; t++) {
                String who = instance.name + "#" + (t + 1);
                Random random = new Random(plan.seed * 31 + who.hashCode());
                threads.add(contenders.submit(() -> contend(sweepCase, instance, who, random)));
            }
        }
        List<Future<?>> faults = new ArrayList<>();
        for (Fault fault : plan.faults) {
            faults.add(faultThreads.submit(() -> inject(sweepCase, fault)));
        }
        for (Future<?> fault : faults) {
            awaitQuietly(fault, Duration.ofSeconds(60), sweepCase, "a fault task", false);
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(AFTER_FAULTS_MILLIS));
        sweepCase.running = false;
        for (Future<?> thread : threads) {
            awaitQuietly(thread, Duration.ofSeconds(60), sweepCase, "a contender", true);
        }
        sweepCase.monitoring = false;
        healAll();
        sweepCase.event("contenders stopped, every handle released, faults healed");
        sweepCase.checkHistory();
        checkNoKeyLeft(sweepCase, TTL.plus(KEY_LEFT_SLACK));
        awaitHealthy();
        probe(sweepCase);
        figures.add(sweepCase);
        String summary = sweepCase.summary();
        if (sweepCase.violations.isEmpty()) {
            System.out
                .println(Boolean.getBoolean("redlock.sweep.verbose") ? summary + "\n" + sweepCase.timeline() : summary);
            return List.of();
        }
        String report = summary + "\n" + sweepCase.timeline();
        System.out.println(report);
        return List.of(report);
    }

    /**
     * One contender thread: lock, draw the token, write to the fenced resource for a
     * while, release; repeat.
     */
    private void contend(SweepCase sweepCase, Instance instance, String who, Random random) {
        while (sweepCase.running) {
            String key = sweepCase.keys.get(random.nextInt(sweepCase.keys.size()));
            boolean longHold = random.nextInt(4) == 0;
            LockRequest request = LockRequest.of(key)
                .withTtl(TTL)
                .withWaitTime(WAIT_TIMES.get(random.nextInt(WAIT_TIMES.size())));
            if (!longHold && random.nextInt(5) == 0) {
                request = request.withWatchdog(false);
            }
            if (random.nextBoolean()) {
                request = request.withFencingToken();
            }
            Optional<LockHandle> acquired;
            try {
                acquired = instance.service.tryLock(request);
            }
            catch (LockAcquisitionException ex) {
                sweepCase.count("tryLock threw " + ex.getClass().getSimpleName());
                pause(random, 10, 30);
                continue;
            }
            catch (RuntimeException ex) {
                sweepCase.unexpected(who + " tryLock", ex);
                pause(random, 10, 30);
                continue;
            }
            if (acquired.isEmpty()) {
                sweepCase.count("tryLock found the lock taken");
                pause(random, 2, 20);
                continue;
            }
            Hold hold = sweepCase.history.acquired(who, key, acquired.get());
            try {
                useTheLock(sweepCase, hold, random, longHold);
            }
            finally {
                release(sweepCase, hold, who);
            }
        }
    }

    private void useTheLock(SweepCase sweepCase, Hold hold, Random random, boolean longHold) {
        long token;
        try {
            token = hold.handle.fencingToken();
        }
        catch (LockLostException ex) {
            sweepCase.count("fencingToken(): lost before the token was drawn");
            return;
        }
        catch (LockAcquisitionException ex) {
            sweepCase.count("fencingToken() threw " + ex.getClass().getSimpleName());
            return;
        }
        catch (RuntimeException ex) {
            sweepCase.unexpected(hold.who + " fencingToken()", ex);
            return;
        }
        hold.token = token;
        long holdNanos = TimeUnit.MILLISECONDS.toNanos(longHold ? 300 + random.nextInt(2_700) : 2 + random.nextInt(28));
        long until = System.nanoTime() + holdNanos;
        do {
            if (!hold.observe()) {
                break;
            }
            sweepCase.resource.write(hold, token, hold.lastHeldNanos());
            hold.observe();
            pause(random, longHold ? 50 : 1, longHold ? 150 : 10);
        }
        while (sweepCase.running && System.nanoTime() - until < 0);
    }

    private void release(SweepCase sweepCase, Hold hold, String who) {
        hold.observe();
        try {
            hold.releaseOutcome = hold.handle.release() ? "released" : "release found it gone";
        }
        catch (LockAcquisitionException ex) {
            hold.releaseOutcome = "release threw " + ex.getClass().getSimpleName();
        }
        catch (RuntimeException ex) {
            hold.releaseOutcome = "release threw " + ex;
            sweepCase.unexpected(who + " release", ex);
        }
        sweepCase.count(hold.handle.isLost() ? "handles found lost by the watchdog" : "handles not lost");
        sweepCase.count("release: " + hold.releaseOutcome);
        sweepCase.history.closed(hold);
    }

    /** Samples every open handle's isHeld() while the case runs. */
    private static void monitor(SweepCase sweepCase) {
        while (sweepCase.monitoring) {
            for (Hold hold : sweepCase.history.open) {
                hold.observe();
            }
            LockSupport.parkNanos(MONITOR_PERIOD_NANOS);
        }
    }

    /**
     * After every handle was released and the faults healed: no key may outlive its ttl
     * on a majority.
     */
    private void checkNoKeyLeft(SweepCase sweepCase, Duration bound) {
        for (String key : sweepCase.keys) {
            try {
                await().pollInterval(Duration.ofMillis(20)).atMost(bound).until(() -> nodesHolding(key) < QUORUM);
            }
            catch (ConditionTimeoutException ex) {
                StringBuilder perNode = new StringBuilder();
                for (Node node : nodes) {
                    String value = node.current().get(redisKey(key));
                    perNode.append(" node ")
                        .append(node.index)
                        .append('=')
                        .append(value == null ? "-"
                                : shortToken(value) + " pttl " + node.current().pttl(redisKey(key)));
                }
                sweepCase.violation("key left on a majority: " + redisKey(key) + " is still on " + nodesHolding(key)
                        + " of " + NODES + " nodes " + bound.toMillis() + " ms after every handle was released and "
                        + "the faults healed (ttl " + TTL.toMillis() + " ms):" + perNode);
            }
        }
    }

    private int nodesHolding(String key) {
        int holding = 0;
        for (Node node : nodes) {
            if (node.current().get(redisKey(key)) != null) {
                holding++;
            }
        }
        return holding;
    }

    /**
     * The key can be taken again, with a fencing token above every one the case issued
     * for it.
     */
    private void probe(SweepCase sweepCase) {
        for (String key : sweepCase.keys) {
            Optional<LockHandle> probe;
            try {
                probe = instances.get(0).service
                    .tryLock(LockRequest.of(key).withTtl(TTL).withWaitTime(Duration.ofSeconds(5)).withFencingToken());
            }
            catch (LockAcquisitionException ex) {
                probe = Optional.empty();
            }
            if (probe.isEmpty()) {
                sweepCase.liveness("the healed key " + key + " could not be taken within 5 s");
                continue;
            }
            try {
                long token = probe.get().fencingToken();
                long highest = sweepCase.history.highestToken(key);
                if (token <= highest) {
                    sweepCase.violation("fencing tokens out of grant order: the probe after the case got " + token
                            + " for " + key + ", not above " + highest);
                }
            }
            catch (LockLostException | LockAcquisitionException ex) {
                sweepCase.liveness("the probe of " + key + " could not draw a fencing token: " + ex);
            }
            finally {
                try {
                    probe.get().release();
                }
                catch (LockAcquisitionException ex) {
                    // The lease runs out on its own.
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------------
    // faults

    private void inject(SweepCase sweepCase, Fault fault) {
        LockSupport
            .parkNanos(sweepCase.startNanos + TimeUnit.MILLISECONDS.toNanos(fault.startMillis) - System.nanoTime());
        sweepCase.event("start " + fault);
        onEachNode(fault, index -> start(fault, index));
        sweepCase.event("started " + fault.kind);
        if (fault.durationMillis > 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(fault.durationMillis));
            onEachNode(fault, index -> end(fault, index));
            sweepCase.event("ended " + fault.kind);
        }
    }

    /**
     * Applies a fault to its nodes at once, each on a thread of its own: a majority
     * restarts together.
     */
    private void onEachNode(Fault fault, IntConsumer action) {
        List<Future<?>> parts = new ArrayList<>();
        for (int index : fault.nodes) {
            parts.add(faultThreads.submit(() -> action.accept(index)));
        }
        for (Future<?> part : parts) {
            try {
                part.get(60, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
            catch (ExecutionException | TimeoutException ex) {
                throw new IllegalStateException("Fault " + fault + " failed on a node", ex);
            }
        }
    }

    private void start(Fault fault, int index) {
        Node node = nodes.get(index);
        switch (fault.kind) {
            case REPLY_DELAY -> faultProxies(fault, index)
                .forEach(proxy -> proxy.delayAllReplies(Duration.ofMillis(fault.amountMillis)));
            case PARTITION -> faultProxies(fault, index).forEach(RedisFaultProxy::blackhole);
            case PAUSE -> node.current().pause();
            case KILL_DIRECT, KILL_BEHIND_PROXY -> node.current().kill();
            case RESTART_DIRECT -> node.current().restart();
            case RESTART_BEHIND_PROXY -> node.keepAlive.restartUpstream();
            case SWITCH_UPSTREAM -> node.switchToStandby();
            case CLOCK_JUMP_MINORITY -> node.current().jumpClock(Duration.ofMillis(fault.amountMillis));
        }
    }

    private void end(Fault fault, int index) {
        Node node = nodes.get(index);
        switch (fault.kind) {
            case REPLY_DELAY -> faultProxies(fault, index).forEach(proxy -> proxy.delayAllReplies(Duration.ZERO));
            case PARTITION -> faultProxies(fault, index).forEach(RedisFaultProxy::heal);
            case PAUSE -> node.current().resume();
            case KILL_DIRECT, KILL_BEHIND_PROXY -> node.current().restart();
            case CLOCK_JUMP_MINORITY -> node.current().jumpClock(Duration.ofMillis(-fault.amountMillis));
            default -> {
                // Instantaneous faults have nothing to end.
            }
        }
    }

    private List<RedisFaultProxy> faultProxies(Fault fault, int index) {
        return (fault.instance < 0 ? instances : List.of(instances.get(fault.instance))).stream()
            .map(instance -> instance.proxies.get(index))
            .toList();
    }

    /** Ends whatever a case left: delays, black holes, paused and stopped servers. */
    private void healAll() {
        for (Instance instance : instances) {
            instance.proxies.forEach(RedisFaultProxy::heal);
        }
        for (Node node : nodes) {
            node.heal();
        }
    }

    /**
     * Until every instance counts every node's votes again (restarted nodes are held back
     * for a lease).
     */
    private void awaitHealthy() {
        try {
            await().pollInterval(Duration.ofMillis(50))
                .atMost(Duration.ofSeconds(30))
                .until(() -> instances.stream()
                    .allMatch(instance -> instance.nodes.guards().stream().allMatch(NodeRestartGuard::votes)));
        }
        catch (ConditionTimeoutException ex) {
            figures.count("heal: a node's votes still held back after 30 s");
        }
    }

    private static List<FaultKind> randomKinds(Random random, List<FaultKind> pool, int count) {
        List<FaultKind> kinds = new ArrayList<>(pool);
        Collections.shuffle(kinds, random);
        return List.copyOf(kinds.subList(0, count));
    }

    private static List<FaultKind> selectedKinds() {
        String names = System.getProperty("redlock.sweep.faults", "");
        if (names.isBlank()) {
            throw new IllegalArgumentException("-Dredlock.sweep.caseSeed needs -Dredlock.sweep.faults=KIND[,KIND...], "
                    + "as the case's report printed it; the kinds are " + Arrays.toString(FaultKind.values()));
        }
        return Arrays.stream(names.split(",")).map(String::trim).map(FaultKind::valueOf).toList();
    }

    /**
     * @param failureIsAViolation whether a failure of the task is the product's (a lock
     * call) or the harness's
     */
    private static void awaitQuietly(Future<?> task, Duration atMost, SweepCase sweepCase, String what,
            boolean failureIsAViolation) {
        try {
            task.get(atMost.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("The sweep was interrupted", ex);
        }
        catch (ExecutionException ex) {
            if (failureIsAViolation) {
                sweepCase.unexpected(what, ex.getCause());
            }
            else {
                sweepCase.liveness(what + " failed: " + ex.getCause());
            }
        }
        catch (TimeoutException ex) {
            sweepCase.liveness(what + " did not return within " + atMost.toSeconds() + " s");
        }
    }

    private static void pause(Random random, int fromMillis, int toMillis) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(fromMillis + random.nextInt(toMillis - fromMillis + 1)));
    }

    private static String redisKey(String key) {
        return "lock:{" + key + "}";
    }

    private static String shortToken(String token) {
        return token.length() > 6 ? token.substring(0, 6) : token;
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    // ------------------------------------------------------------------------------------------------
    // the plan

    /**
     * What can go wrong, on which nodes; each kind's widest reach is what the short sweep
     * tries.
     */
    enum FaultKind {

        /**
         * Every reply of some nodes, to one instance or all, delayed by half to one and a
         * half node timeouts.
         */
        REPLY_DELAY,
        /**
         * SIGSTOP of some nodes (up to a majority) for a while: connections stay open,
         * nothing answers.
         */
        PAUSE,
        /**
         * One instance's links to up to a majority of the nodes black-holed for a while.
         */
        PARTITION,
        /**
         * Nodes reached directly killed (SIGKILL), down for a while, then started again
         * empty.
         */
        KILL_DIRECT,
        /**
         * The same behind keep-alive proxies: the clients' connections stay open
         * throughout.
         */
        KILL_BEHIND_PROXY,
        /**
         * Nodes reached directly restarted empty at once: the clients' connections drop.
         */
        RESTART_DIRECT,
        /**
         * Nodes behind keep-alive proxies restarted empty at once, up to a majority: no
         * connection drops.
         */
        RESTART_BEHIND_PROXY,
        /**
         * Keep-alive proxies pointed at an empty, long-running standby, up to a majority.
         */
        SWITCH_UPSTREAM,
        /**
         * The wall clock of a minority of the nodes stepped forward by half to nine
         * tenths of a lease, and back after a while, as NTP would correct it. Less than a
         * lease: a fencing token drawn on a clock that ran ahead must be overtaken by the
         * time a node that forgot the counter votes again (docs/redlock.md, fencing).
         */
        CLOCK_JUMP_MINORITY;

        boolean hitsServers() {
            return this != REPLY_DELAY && this != PARTITION;
        }

        /** The nodes it may hit. */
        List<Integer> candidates() {
            List<Integer> all = new ArrayList<>();
            for (int i = 0; i < NODES; i++) {
                boolean keepAlive = i < KEEP_ALIVE_NODES;
                boolean fits = switch (this) {
                    case KILL_DIRECT, RESTART_DIRECT -> !keepAlive;
                    case KILL_BEHIND_PROXY, RESTART_BEHIND_PROXY, SWITCH_UPSTREAM -> keepAlive;
                    default -> true;
                };
                if (fits) {
                    all.add(i);
                }
            }
            return all;
        }

        /** How many nodes it may hit at most. */
        int widest() {
            return switch (this) {
                case REPLY_DELAY -> NODES;
                case CLOCK_JUMP_MINORITY -> NODES - QUORUM;
                default -> Math.min(QUORUM, candidates().size());
            };
        }

    }

    /**
     * One fault of a case.
     *
     * @param instance the instance whose links it hits (index), or -1 for all; only for
     * link faults
     * @param startMillis when it starts, after the contenders did
     * @param durationMillis how long it lasts; 0 for one that happens at once (restart,
     * switch)
     * @param amountMillis the delay of {@link FaultKind#REPLY_DELAY} or the jump of
     * {@link FaultKind#CLOCK_JUMP_MINORITY}
     */
    record Fault(FaultKind kind, int instance, List<Integer> nodes, long startMillis, long durationMillis,
            long amountMillis) {

        @Override
        public String toString() {
            return kind + " on nodes " + nodes
                    + (kind.hitsServers() ? ""
                            : instance < 0 ? " (all instances)" : " (instance " + (char) ('A' + instance) + ")")
                    + " at " + startMillis + " ms" + (durationMillis > 0 ? " for " + durationMillis + " ms" : "")
                    + (amountMillis > 0
                            ? (kind == FaultKind.REPLY_DELAY ? ", delay " : ", jump +") + amountMillis + " ms" : "");
        }
    }

    /**
     * The faults of one case, drawn from its seed: which nodes (a node's server takes at
     * most one fault per case), when, how long.
     */
    record CasePlan(long seed, List<FaultKind> kinds, boolean widest, List<Fault> faults) {

        static CasePlan of(long seed, List<FaultKind> kinds, boolean widest) {
            Random random = new Random(seed);
            Set<Integer> serversTaken = new HashSet<>();
            // "instance:node" of every link a link fault took already.
            Set<String> linksTaken = new HashSet<>();
            List<Fault> faults = new ArrayList<>();
            for (FaultKind kind : kinds) {
                List<Integer> candidates = new ArrayList<>(kind.candidates());
                candidates.removeIf(node -> kind.hitsServers() && serversTaken.contains(node));
                int instance = kind == FaultKind.PARTITION ? random.nextInt(INSTANCES)
                        : kind == FaultKind.REPLY_DELAY ? (widest ? -1 : random.nextInt(INSTANCES + 1) - 1) : -1;
                List<Integer> linkInstances = new ArrayList<>();
                for (int i = 0; i < INSTANCES; i++) {
                    if (instance < 0 || instance == i) {
                        linkInstances.add(i);
                    }
                }
                candidates.removeIf(node -> !kind.hitsServers()
                        && linkInstances.stream().anyMatch(i -> linksTaken.contains(i + ":" + node)));
                int most = Math.min(kind.widest(), candidates.size());
                if (most == 0) {
                    continue;
                }
                Collections.shuffle(candidates, random);
                int count = widest ? most : 1 + random.nextInt(most);
                List<Integer> chosen = candidates.subList(0, count).stream().sorted().toList();
                for (int node : chosen) {
                    if (kind.hitsServers()) {
                        serversTaken.add(node);
                    }
                    else {
                        linkInstances.forEach(i -> linksTaken.add(i + ":" + node));
                    }
                }
                long start = 300 + random.nextInt(1_700);
                boolean lasts = switch (kind) {
                    case RESTART_DIRECT, RESTART_BEHIND_PROXY, SWITCH_UPSTREAM -> false;
                    default -> true;
                };
                long duration = lasts ? 200 + random.nextInt(2_300) : 0;
                long amount = switch (kind) {
                    case REPLY_DELAY -> NODE_TIMEOUT.toMillis() / 2 + random.nextInt((int) NODE_TIMEOUT.toMillis() + 1);
                    case CLOCK_JUMP_MINORITY -> TTL.toMillis() / 2 + random.nextInt((int) TTL.toMillis() * 2 / 5 + 1);
                    default -> 0;
                };
                faults.add(new Fault(kind, instance, chosen, start, duration, amount));
            }
            return new CasePlan(seed, List.copyOf(kinds), widest, List.copyOf(faults));
        }

        /** The flags that run this case again. */
        String rerun() {
            return "-Dredlock.sweep.long=true -Dredlock.sweep.caseSeed=" + seed + " -Dredlock.sweep.faults="
                    + kinds.stream().map(Enum::name).collect(Collectors.joining(","))
                    + (widest ? " -Dredlock.sweep.widest=true" : "");
        }
    }

    // ------------------------------------------------------------------------------------------------
    // the setup

    /**
     * One Redlock node: its server, and for a keep-alive node the proxy in front and an
     * empty standby.
     */
    private static final class Node {

        final int index;

        private final RedisTestServer primary;

        final RedisKeepAliveProxy keepAlive;

        /** The server not behind the proxy now, for the next switch. */
        private volatile RedisTestServer standby;

        Node(int index, boolean keepAlive) {
            this.index = index;
            this.primary = longRunning();
            this.keepAlive = keepAlive ? RedisKeepAliveProxy.start(primary) : null;
            this.standby = keepAlive ? longRunning() : null;
        }

        /**
         * An empty server up for an hour by its clock: restart protection counts its
         * votes at once.
         */
        private static RedisTestServer longRunning() {
            RedisTestServer server = RedisTestServer.builder().withFakeClock().start();
            server.jumpClock(CLOCK_OFFSET);
            return server;
        }

        /** The server clients reach now. */
        RedisTestServer current() {
            return keepAlive != null ? keepAlive.upstream() : primary;
        }

        String host() {
            return keepAlive != null ? keepAlive.host() : primary.host();
        }

        int port() {
            return keepAlive != null ? keepAlive.port() : primary.port();
        }

        /**
         * Points the keep-alive proxy at the standby, emptied first; the server it leaves
         * is the next standby.
         */
        synchronized void switchToStandby() {
            RedisTestServer next = standby;
            next.flushAll();
            RedisTestServer previous = keepAlive.upstream();
            keepAlive.switchUpstream(next);
            standby = previous;
        }

        synchronized void heal() {
            for (RedisTestServer server : standby == null ? List.of(current()) : List.of(current(), standby)) {
                if (server.isPaused()) {
                    server.resume();
                }
                if (!server.isRunning()) {
                    server.restart();
                }
                if (!server.clockOffset().equals(CLOCK_OFFSET)) {
                    server.jumpClock(CLOCK_OFFSET.minus(server.clockOffset()));
                }
            }
        }

        void close() {
            if (keepAlive != null) {
                keepAlive.close();
                standby.close();
                current().close();
            }
            primary.close();
        }

    }

    /**
     * An application instance: Redlock clients, lock service and watchdog of its own,
     * behind its own fault proxies.
     */
    private static final class Instance implements AutoCloseable {

        final String name;

        final List<RedisFaultProxy> proxies = new ArrayList<>();

        final LettuceRedlockNodes nodes;

        private final RedlockBackend redlock;

        private final LeaseWatchdog watchdog;

        final DefaultLockService service;

        Instance(String name, List<Node> redlockNodes) {
            this.name = name;
            for (Node node : redlockNodes) {
                proxies.add(RedisFaultProxy.start(node.host(), node.port()));
            }
            nodes = LettuceRedlockNodes.connect(proxies.stream().map(RedisFaultProxy::redisUri).toList(), NODE_TIMEOUT,
                    "lock:", TTL, true, Set.of());
            nodes.awaitConnected(Duration.ofSeconds(10));
            redlock = nodes.redlock(0.01);
            LockWaiters waiters = new LockWaiters();
            redlock.releaseHints().waitersRetryEvery(Duration.ofMillis(50)).deliverTo(waiters);
            watchdog = new LeaseWatchdog(redlock, 1.0 / 3);
            service = new DefaultLockService(redlock, watchdog,
                    new LockDefaults(TTL, Duration.ZERO, true, Duration.ofMillis(50)), waiters);
            // A majority answers before the first case (a cold connect can outlast the
            // node timeout).
            await().atMost(Duration.ofSeconds(20))
                .ignoreExceptions()
                .until(() -> service.tryLock("rsweep:warm-up:" + name, TTL, Duration.ZERO)
                    .map(LockHandle::release)
                    .orElse(false));
        }

        @Override
        public void close() {
            service.close();
            watchdog.close();
            redlock.close();
            proxies.forEach(RedisFaultProxy::close);
        }

    }

    // ------------------------------------------------------------------------------------------------
    // the history

    /** One case: its plan, its keys, its history, resource, events and findings. */
    private static final class SweepCase {

        final int number;

        final CasePlan plan;

        final List<String> keys;

        final long startNanos = System.nanoTime();

        final History history = new History();

        final FencedResource resource = new FencedResource();

        final List<String> events = new CopyOnWriteArrayList<>();

        final List<String> violations = new CopyOnWriteArrayList<>();

        /**
         * Pairs of holds already reported by a resource check: one line per pair, not one
         * per write.
         */
        private final Set<String> reportedPairs = new HashSet<>();

        final List<String> liveness = new CopyOnWriteArrayList<>();

        final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

        volatile boolean running = true;

        volatile boolean monitoring = true;

        SweepCase(int number, CasePlan plan, List<String> keys) {
            this.number = number;
            this.plan = plan;
            this.keys = keys;
        }

        long millis(long nanos) {
            return TimeUnit.NANOSECONDS.toMillis(nanos - startNanos);
        }

        void event(String what) {
            events.add(String.format(Locale.ROOT, "%6d ms  %s", millis(System.nanoTime()), what));
        }

        void count(String what) {
            counts.computeIfAbsent(what, key -> new LongAdder()).increment();
        }

        void violation(String description) {
            violations.add(description);
            event("VIOLATION " + description);
        }

        void liveness(String description) {
            liveness.add(description);
            event("LIVENESS " + description);
        }

        /**
         * An exception a lock call must never throw (only lock acquisition and lost-lock
         * exceptions are expected).
         */
        void unexpected(String where, Throwable ex) {
            StringBuilder trace = new StringBuilder(where + " threw " + ex);
            StackTraceElement[] stack = ex.getStackTrace();
            for (StackTraceElement element : Arrays.copyOf(stack, Math.min(6, stack.length))) {
                trace.append("\n        at ").append(element);
            }
            violation("unexpected exception: " + trace);
        }

        /**
         * The checks on the recorded history: overlaps, token order, the resource's
         * refusals and turns.
         */
        void checkHistory() {
            for (String key : keys) {
                List<Hold> holds = history.of(key);
                checkOverlaps(key, holds);
                checkTokenOrder(key, holds);
            }
            // A refused write or a change of writer is expected where a lease ran out
            // under a fault; it is a
            // violation only if both holders were seen held at the same moment.
            for (FencedResource.Refusal refusal : resource.refusals) {
                if (refusal.writer.heldAt(refusal.winnerSeenHeld)
                        && firstReport("refusal", refusal.writer, refusal.winner)) {
                    violation("a write refused by the fence came from a holder that held the lock when the newer "
                            + "holder wrote: " + refusal.writer.describe(this) + " wrote token " + refusal.token
                            + " at " + millis(refusal.atNanos) + " ms, after " + refusal.winner.describe(this)
                            + ", seen held at " + millis(refusal.winnerSeenHeld) + " ms, wrote " + refusal.highest);
                }
            }
            for (FencedResource.Turn turn : resource.turns) {
                if (turn.previous.heldAt(turn.nextSeenHeld) && firstReport("turn", turn.previous, turn.next)) {
                    violation("two holders wrote in turn while both held the lock: " + turn.next.describe(this)
                            + " wrote at " + millis(turn.atNanos) + " ms, seen held at " + millis(turn.nextSeenHeld)
                            + " ms, when " + turn.previous.describe(this) + " held it too");
                }
            }
            count("fenced writes refused (stale holders stopped by the fence)", resource.refusals.size());
            count("writes accepted", resource.accepted.get());
            count("holder changes between writes with the previous holder's session open", resource.turns.size());
        }

        private boolean firstReport(String check, Hold one, Hold other) {
            return reportedPairs.add(check + " " + System.identityHashCode(one) + " " + System.identityHashCode(other));
        }

        void count(String what, long howMany) {
            counts.computeIfAbsent(what, key -> new LongAdder()).add(howMany);
        }

        private void checkOverlaps(String key, List<Hold> holds) {
            List<long[]> segments = new ArrayList<>();
            Map<long[], Hold> owners = new IdentityHashMap<>();
            for (Hold hold : holds) {
                for (long[] segment : hold.segments()) {
                    segments.add(segment);
                    owners.put(segment, hold);
                }
            }
            segments.sort(Comparator.comparingLong(segment -> segment[0]));
            long[] widest = null;
            int reported = 0;
            for (long[] segment : segments) {
                if (widest != null && segment[0] - widest[1] <= 0 && owners.get(widest) != owners.get(segment)) {
                    if (reported++ < 3) {
                        violation("two holders at once of " + key + ": " + owners.get(widest).describe(this) + " and "
                                + owners.get(segment).describe(this) + " both reported isHeld() at "
                                + millis(segment[0]) + " ms");
                    }
                }
                if (widest == null || segment[1] - widest[1] > 0) {
                    widest = segment;
                }
            }
        }

        private void checkTokenOrder(String key, List<Hold> holds) {
            List<Hold> withTokens = holds.stream()
                .filter(hold -> hold.token > 0 && hold.firstHeldNanos() != 0)
                .sorted(Comparator.comparingLong(hold -> hold.firstHeldNanos() - startNanos))
                .toList();
            for (int i = 1; i < withTokens.size(); i++) {
                Hold before = withTokens.get(i - 1);
                Hold after = withTokens.get(i);
                if (after.token <= before.token) {
                    violation("fencing tokens out of grant order for " + key + ": " + after.describe(this)
                            + " was first held after " + before.describe(this));
                }
            }
        }

        String summary() {
            return String.format(Locale.ROOT,
                    "Case %d (seed %d) %s: %d hold(s), %d violation(s), %d liveness " + "finding(s); rerun: %s", number,
                    plan.seed, plan.faults, history.all.size(), violations.size(), liveness.size(), plan.rerun())
                    + (violations.isEmpty() ? "" : "\n  " + String.join("\n  ", violations))
                    + (liveness.isEmpty() ? "" : "\n  liveness: " + String.join("\n  liveness: ", liveness));
        }

        String timeline() {
            List<String> lines = new ArrayList<>(events);
            for (Hold hold : history.all) {
                lines.add(String.format(Locale.ROOT, "%6d ms  %s", millis(hold.acquiredNanos), hold.describe(this)));
            }
            lines.sort(Comparator.comparing(line -> Long.parseLong(line.substring(0, 6).trim())));
            return " timeline of case " + number + ":\n  " + String.join("\n  ", lines) + "\n  counts: "
                    + new TreeMap<>(counts);
        }

    }

    /** Every acquisition of a case, by key, and those not released yet. */
    private static final class History {

        final List<Hold> all = new CopyOnWriteArrayList<>();

        final Set<Hold> open = ConcurrentHashMap.newKeySet();

        Hold acquired(String who, String key, LockHandle handle) {
            Hold hold = new Hold(who, key, handle, shortToken(HandleTokens.tokenOf(handle)));
            hold.observe();
            all.add(hold);
            open.add(hold);
            return hold;
        }

        void closed(Hold hold) {
            hold.observe();
            hold.closed = true;
            open.remove(hold);
        }

        /**
         * A hold made up by the self-test: held from {@code from} to {@code to}, with
         * {@code token}.
         */
        Hold synthetic(String who, String key, long from, long to, long token) {
            Hold hold = new Hold(who, key, null, "made-up");
            hold.heldBetween(from, to);
            hold.token = token;
            all.add(hold);
            return hold;
        }

        List<Hold> of(String key) {
            return all.stream().filter(hold -> hold.key.equals(key)).toList();
        }

        long highestToken(String key) {
            return of(key).stream().mapToLong(hold -> hold.token).max().orElse(0);
        }

    }

    /**
     * One handle from its acquisition to its release, and when it reported
     * {@link LockHandle#isHeld()}: the runs of consecutive observations that found it
     * held. Observations are taken under the hold's monitor, so a true and a false one
     * are recorded in the order they were made.
     */
    private static final class Hold {

        final String who;

        final String key;

        final LockHandle handle;

        final String handleToken;

        final long acquiredNanos = System.nanoTime();

        private final List<long[]> segments = new ArrayList<>();

        private long[] current;

        volatile long token;

        volatile String releaseOutcome = "not released";

        volatile boolean closed;

        Hold(String who, String key, LockHandle handle, String handleToken) {
            this.who = who;
            this.key = key;
            this.handle = handle;
            this.handleToken = handleToken;
        }

        /**
         * Whether the handle reports the lock held now; recorded with the time read just
         * before asking.
         */
        synchronized boolean observe() {
            long now = System.nanoTime();
            boolean held = handle.isHeld();
            if (held) {
                if (current == null) {
                    current = new long[] { now, now };
                    segments.add(current);
                }
                else {
                    current[1] = now;
                }
            }
            else {
                current = null;
            }
            return held;
        }

        synchronized void heldBetween(long from, long to) {
            current = new long[] { from, to };
            segments.add(current);
        }

        /** Whether it was seen held over a stretch that includes {@code nanos}. */
        synchronized boolean heldAt(long nanos) {
            return segments.stream().anyMatch(segment -> segment[0] - nanos <= 0 && nanos - segment[1] <= 0);
        }

        synchronized List<long[]> segments() {
            return segments.stream().map(long[]::clone).toList();
        }

        synchronized long firstHeldNanos() {
            return segments.isEmpty() ? 0 : segments.get(0)[0];
        }

        /** The last time it was seen held, or its acquisition time if never. */
        synchronized long lastHeldNanos() {
            return segments.isEmpty() ? acquiredNanos - 1 : segments.get(segments.size() - 1)[1];
        }

        synchronized String describe(SweepCase sweepCase) {
            String held = segments.stream()
                .map(segment -> sweepCase.millis(segment[0]) + ".." + sweepCase.millis(segment[1]))
                .collect(Collectors.joining(", "));
            return who + " handle " + handleToken + " (" + key + ", token " + (token > 0 ? token : "none") + ", held "
                    + (held.isEmpty() ? "never" : held + " ms") + ", " + releaseOutcome
                    + (handle != null && handle.isLost() ? ", found lost" : "") + ")";
        }

    }

    /**
     * The protected resource, one record per key: it takes a write only with a fencing
     * token at least the highest it took, and records the writes it refused. It also
     * records each write that follows another holder's while that holder had not released
     * yet: without the fence, those two would have interleaved.
     */
    private static final class FencedResource {

        /**
         * A write refused: {@code winner} had written {@code highest} and was seen held
         * at {@code winnerSeenHeld}.
         */
        record Refusal(Hold writer, long token, Hold winner, long highest, long winnerSeenHeld, long atNanos) {
        }

        /**
         * A write of {@code next}, seen held at {@code nextSeenHeld}, after
         * {@code previous}'s, not yet released.
         */
        record Turn(Hold previous, Hold next, long nextSeenHeld, long atNanos) {
        }

        private final Map<String, Hold> lastWriter = new LinkedHashMap<>();

        private final Map<String, Long> lastWriterSeenHeld = new LinkedHashMap<>();

        private final Map<String, Long> highest = new LinkedHashMap<>();

        final List<Refusal> refusals = new CopyOnWriteArrayList<>();

        final List<Turn> turns = new CopyOnWriteArrayList<>();

        final AtomicLong accepted = new AtomicLong();

        /**
         * @param seenHeld when the writer was last seen holding the lock, just before
         * this write
         * @return whether the write was taken
         */
        synchronized boolean write(Hold writer, long token, long seenHeld) {
            long now = System.nanoTime();
            long fence = highest.getOrDefault(writer.key, 0L);
            Hold previous = lastWriter.get(writer.key);
            if (token < fence || (token == fence && previous != writer)) {
                refusals.add(new Refusal(writer, token, previous, fence, lastWriterSeenHeld.get(writer.key), now));
                return false;
            }
            if (previous != null && previous != writer && !previous.closed) {
                turns.add(new Turn(previous, writer, seenHeld, now));
            }
            highest.put(writer.key, token);
            lastWriter.put(writer.key, writer);
            lastWriterSeenHeld.put(writer.key, seenHeld);
            accepted.incrementAndGet();
            return true;
        }

    }

    /** Figures over the whole sweep. */
    private static final class Figures {

        private final AtomicInteger cases = new AtomicInteger();

        private final Map<FaultKind, LongAdder> faultsByKind = new ConcurrentHashMap<>();

        private final Map<FaultKind, LongAdder> casesByKind = new ConcurrentHashMap<>();

        private final Map<FaultKind, LongAdder> violationsByKind = new ConcurrentHashMap<>();

        private final Map<FaultKind, LongAdder> violatedCasesByKind = new ConcurrentHashMap<>();

        private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

        private final List<String> violations = new CopyOnWriteArrayList<>();

        private final List<String> liveness = new CopyOnWriteArrayList<>();

        void caseRun(CasePlan plan) {
            cases.incrementAndGet();
            for (Fault fault : plan.faults) {
                faultsByKind.computeIfAbsent(fault.kind, kind -> new LongAdder()).increment();
            }
            plan.faults.stream()
                .map(Fault::kind)
                .distinct()
                .forEach(kind -> casesByKind.computeIfAbsent(kind, key -> new LongAdder()).increment());
        }

        void count(String what) {
            counts.computeIfAbsent(what, key -> new LongAdder()).increment();
        }

        void add(SweepCase sweepCase) {
            sweepCase.counts
                .forEach((what, count) -> counts.computeIfAbsent(what, key -> new LongAdder()).add(count.sum()));
            counts.computeIfAbsent("holds (acquisitions)", key -> new LongAdder()).add(sweepCase.history.all.size());
            for (String violation : sweepCase.violations) {
                violations.add("case " + sweepCase.number + " (" + sweepCase.plan.rerun() + "): "
                        + violation.lines().findFirst().orElse(""));
            }
            for (String finding : sweepCase.liveness) {
                liveness.add("case " + sweepCase.number + " (" + sweepCase.plan.rerun() + "): " + finding);
            }
            if (!sweepCase.violations.isEmpty()) {
                sweepCase.plan.faults.stream().map(Fault::kind).distinct().forEach(kind -> {
                    violationsByKind.computeIfAbsent(kind, key -> new LongAdder()).add(sweepCase.violations.size());
                    violatedCasesByKind.computeIfAbsent(kind, key -> new LongAdder()).increment();
                });
            }
        }

        String report() {
            StringBuilder text = new StringBuilder(String.format(Locale.ROOT,
                    "Redlock fault sweep figures: %d case(s), %d violation(s), %d liveness finding(s)%n", cases.get(),
                    violations.size(), liveness.size()));
            text.append(String.format(Locale.ROOT, "  %-22s %7s %7s %17s %11s%n", "fault kind", "faults", "cases",
                    "cases violated", "violations"));
            for (FaultKind kind : EnumSet.allOf(FaultKind.class)) {
                text.append(String.format(Locale.ROOT, "  %-22s %7d %7d %17d %11d%n", kind, sum(faultsByKind, kind),
                        sum(casesByKind, kind), sum(violatedCasesByKind, kind), sum(violationsByKind, kind)));
            }
            text.append("  (a case of several kinds counts under each of them)\n");
            new TreeMap<>(counts)
                .forEach((what, count) -> text.append(String.format(Locale.ROOT, "  %8d  %s%n", count.sum(), what)));
            violations.forEach(violation -> text.append("  VIOLATION ").append(violation).append('\n'));
            liveness.forEach(finding -> text.append("  LIVENESS ").append(finding).append('\n'));
            return text.toString();
        }

        private static long sum(Map<FaultKind, LongAdder> map, FaultKind kind) {
            LongAdder adder = map.get(kind);
            return adder == null ? 0 : adder.sum();
        }

    }

}
