package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongPredicate;
import java.util.function.Predicate;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Assumptions;

import io.github.distlock.LockHandle;
import io.github.distlock.LockLostEvent;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.autoconfigure.DistributedLockProperties;
import io.github.distlock.core.HandleTokens;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.RespConnection;

/**
 * What the failover tests do to two application instances around a failover, and how they
 * judge the outcome. The same drill runs on Sentinel and on Cluster; only the
 * {@link Topology} differs.
 *
 * <ul>
 * <li><b>Contention.</b> Threads of both instances take a few locks in turn through
 * {@link LockService} (with wait time, watchdog on) and hold each for a few tens of
 * milliseconds. An occupancy count per lock name, shared by the whole JVM, is raised on
 * entering and lowered on leaving; entering a lock whose count is not 0 is an exclusion
 * violation.</li>
 * <li><b>Held and waited for.</b> Locks taken before the failover and held across it
 * (watchdog on), with threads of the other instance waiting for some of them.</li>
 * <li><b>Probes.</b> Each instance takes a fresh uncontended lock every
 * {@value #PROBE_PERIOD_MILLIS} ms and keeps it: the first probe that began after the
 * master switched and was kept tells when locking resumed on the new master, and the
 * probes taken in the failover window are the ones a failover may lose.</li>
 * <li><b>Takeovers.</b> Right after the failover each instance tries to take the other's
 * probes; a waiter that gets a held lock before the drill released it took it over.
 * Either, while the first holder still reports the lock held, is an exclusion violation
 * too: two holders at once.</li>
 * <li><b>Subscription and hand-over.</b> Both instances' subscriptions deliver again
 * after the failover, and a release wakes the other instance's waiter by message, without
 * it polling.</li>
 * </ul>
 *
 * <p>
 * Held locks are judged by what Redis holds: a handle is <em>kept</em> if it reports the
 * lock held and the key on the master that serves it now holds the handle's token,
 * <em>lost</em> if it reports the lock lost and its instance published a
 * {@link LockLostEvent} for it. Anything else (held with another token or none in Redis)
 * is a lock kept silently, and must have turned into one of the two within a lease and a
 * renewal.
 */
final class FailoverDrill implements AutoCloseable {

    /**
     * Held locks and probes: renewed every second, so a lost one is noticed within about
     * a second.
     */
    static final Duration HELD_TTL = Duration.ofSeconds(3);

    private static final Duration CONTENDED_TTL = Duration.ofSeconds(2);

    private static final Duration CONTENDED_WAIT = Duration.ofSeconds(5);

    private static final Duration WAITER_WAIT = Duration.ofSeconds(60);

    /** Generous: an assertion that locking resumes at all, not a latency threshold. */
    static final Duration RESUME_BOUND = Duration.ofSeconds(30);

    private static final long PROBE_PERIOD_MILLIS = 40;

    private static final String CHANNEL = HandOverSubscriber.handOverChannel("lock:");

    /** Where the drill's keys live; Sentinel and Cluster answer differently. */
    interface Topology {

        /**
         * Whether a lock name's key is in the part of the data that fails over (always,
         * with Sentinel).
         */
        boolean failsOver(String lockName);

        /**
         * {@code GET} of each key, each read on the master that serves it now; null for a
         * missing key.
         */
        Map<String, String> read(Collection<String> redisKeys);

        /** The master that serves a key now. */
        RedisTestServer masterOf(String redisKey);

        /**
         * How many connections are subscribed to the channel where the instances'
         * subscriptions should be.
         */
        long subscribers(String channel);

    }

    /**
     * A handle held across the failover, the instance that holds it, and whether it is a
     * probe.
     */
    private record Tracked(LockHandle handle, LockApplication app, String what, boolean probe) {
    }

    /** One probe acquisition: when it began and ended, and its handle if it got one. */
    private record Probe(long startNanos, long endNanos, LockHandle handle) {
    }

    private final String topologyName;

    private final String client;

    private final int acks;

    private final List<LockApplication> apps;

    private final Topology topology;

    private final ExecutorService threads = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "failover-drill");
        thread.setDaemon(true);
        return thread;
    });

    private final List<Future<?>> traffic = new ArrayList<>();

    private final AtomicBoolean stop = new AtomicBoolean();

    private volatile boolean closed;

    private final Map<String, AtomicInteger> occupancy = new ConcurrentHashMap<>();

    private final AtomicInteger violations = new AtomicInteger();

    private final AtomicInteger takeoverViolations = new AtomicInteger();

    private final List<String> violationDetails = new CopyOnWriteArrayList<>();

    private final LongAdder contendedAcquisitions = new LongAdder();

    private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();

    /** The first message of each kind of error, for {@link #errorSamples()}. */
    private final Map<String, String> firstErrors = new ConcurrentHashMap<>();

    private final List<Tracked> held = new CopyOnWriteArrayList<>();

    private final List<Future<LockHandle>> waiters = new CopyOnWriteArrayList<>();

    private final List<Probe> probes = new CopyOnWriteArrayList<>();

    private volatile long failoverStartNanos;

    private volatile long switchNanos;

    private volatile long cutoverNanos;

    private volatile Set<LockHandle> keptHandles;

    private int kept = -1;

    private int lost = -1;

    private long resumeMillis = -1;

    FailoverDrill(String topologyName, String client, int acks, List<LockApplication> apps, Topology topology) {
        this.topologyName = topologyName;
        this.client = client;
        this.acks = acks;
        this.apps = apps;
        this.topology = topology;
    }

    /**
     * The instance properties for {@code distributed-lock.replica-acks}: none for 0, the
     * default, so that the acks=0 runs work on a build without the property too. A run
     * with acks above 0 is skipped, with the reason, on a build that does not have the
     * property yet.
     */
    static List<String> replicaAcksProperties(int acks) {
        if (acks == 0) {
            return List.of();
        }
        boolean supported;
        try {
            DistributedLockProperties.class.getMethod("getReplicaAcks");
            supported = true;
        }
        catch (NoSuchMethodException ex) {
            supported = false;
        }
        Assumptions.assumeTrue(supported,
                "distributed-lock.replica-acks is not implemented on this branch yet; the acks=" + acks
                        + " run waits for it");
        return List.of("distributed-lock.replica-acks=" + acks);
    }

    /** Lock names with the given prefix whose keys are in the part that fails over. */
    List<String> names(String prefix, int count) {
        List<String> names = new ArrayList<>();
        for (int i = 0; names.size() < count; i++) {
            if (topology.failsOver(prefix + i)) {
                names.add(prefix + i);
            }
        }
        return names;
    }

    // ------------------------------------------------------------------------------------------
    // before the failover

    /**
     * One uncontended acquisition per instance, so that a cold client's first connect is
     * not part of the drill.
     */
    void warmUp() {
        for (LockApplication app : apps) {
            LockHandle handle = app.lockService()
                .lock(LockRequest.of("warm-up").withTtl(Duration.ofSeconds(10)).withWaitTime(Duration.ofSeconds(10)));
            assertThat(handle.release()).isTrue();
        }
    }

    /** {@code holder} takes these locks, to hold them across the failover. */
    void hold(LockApplication holder, List<String> names) {
        for (String name : names) {
            LockHandle handle = holder.lockService()
                .lock(LockRequest.of(name).withTtl(HELD_TTL).withWaitTime(Duration.ZERO).withWatchdog(true));
            held.add(new Tracked(handle, holder, "held " + name, false));
        }
    }

    /**
     * A thread of {@code waiter} waits for each of these held locks, and is queued in
     * Redis before this returns.
     */
    void waitFor(LockApplication waiter, List<String> names) {
        int before = waiter.bean(LockWaiters.class).waiting();
        for (String name : names) {
            LockHandle holder = held.stream()
                .map(Tracked::handle)
                .filter(handle -> handle.key().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException(name + " is not held"));
            waiters.add(threads.submit(() -> {
                LockHandle handle = waitUntilAcquired(waiter.lockService(), name);
                // Released by the drill only at the end; before that, the waiter may get
                // the lock only if the
                // holder's lease is gone from Redis, and then the holder must not still
                // report it held.
                if (holder.isHeld()) {
                    takeoverViolations.incrementAndGet();
                    violationDetails.add(
                            name + " went to a waiter " + sinceFailover() + " while its holder still reported it held");
                }
                return handle;
            }));
        }
        await().atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertThat(waiter.bean(LockWaiters.class).waiting()).as("threads waiting")
                .isEqualTo(before + names.size()));
    }

    /**
     * Waits for a lock as an application that must have it does: a wait that fails
     * because Redis did not answer in time (the failover) is started again, until
     * {@link #WAITER_WAIT} is over.
     */
    private LockHandle waitUntilAcquired(LockService service, String name) {
        long deadline = System.nanoTime() + WAITER_WAIT.toNanos();
        while (true) {
            try {
                return service.lock(LockRequest.of(name)
                    .withTtl(HELD_TTL)
                    .withWaitTime(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))
                    .withWatchdog(true));
            }
            catch (RuntimeException ex) {
                if (Thread.currentThread().isInterrupted() || System.nanoTime() - deadline > 0) {
                    throw ex;
                }
                count(ex);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
        }
    }

    /**
     * {@code threadsPerApp} threads of every instance contend for these locks until
     * {@link #stopTraffic()}.
     */
    void contend(List<String> names, int threadsPerApp) {
        names.forEach(name -> occupancy.put(name, new AtomicInteger()));
        for (int a = 0; a < apps.size(); a++) {
            LockService service = apps.get(a).lockService();
            String instance = "instance " + a;
            for (int t = 0; t < threadsPerApp; t++) {
                traffic.add(threads.submit(() -> contendUntilStopped(service, instance, names)));
            }
        }
    }

    private void contendUntilStopped(LockService service, String instance, List<String> names) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (!stop.get()) {
            String name = names.get(random.nextInt(names.size()));
            Optional<LockHandle> acquired;
            try {
                acquired = service.tryLock(
                        LockRequest.of(name).withTtl(CONTENDED_TTL).withWaitTime(CONTENDED_WAIT).withWatchdog(true));
            }
            catch (RuntimeException ex) {
                // Expected while the master changes: the instance reports the failure,
                // and we try again.
                count(ex);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                continue;
            }
            if (acquired.isEmpty()) {
                continue;
            }
            LockHandle handle = acquired.get();
            AtomicInteger inside = occupancy.get(name);
            int others = inside.getAndIncrement();
            if (others != 0) {
                violations.incrementAndGet();
                violationDetails.add(name + " entered by " + instance + " " + sinceFailover() + " while " + others
                        + " other holder(s) were inside");
            }
            try {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20 + random.nextInt(40)));
            }
            finally {
                inside.decrementAndGet();
            }
            contendedAcquisitions.increment();
            try {
                handle.release();
            }
            catch (RuntimeException ex) {
                count(ex);
            }
        }
    }

    /**
     * Every instance takes a fresh uncontended lock every few tens of milliseconds, and
     * keeps it.
     */
    void probe() {
        for (int a = 0; a < apps.size(); a++) {
            LockApplication app = apps.get(a);
            String prefix = "probe:" + a + ":";
            traffic.add(threads.submit(() -> {
                int next = 0;
                while (!stop.get()) {
                    String name = prefix + next++;
                    if (!topology.failsOver(name)) {
                        continue;
                    }
                    long start = System.nanoTime();
                    LockHandle handle = null;
                    try {
                        handle = app.lockService()
                            .tryLock(LockRequest.of(name)
                                .withTtl(HELD_TTL)
                                .withWaitTime(Duration.ZERO)
                                .withWatchdog(true))
                            .orElse(null);
                    }
                    catch (RuntimeException ex) {
                        count(ex);
                    }
                    probes.add(new Probe(start, System.nanoTime(), handle));
                    if (handle != null) {
                        held.add(new Tracked(handle, app, "probe " + name, true));
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(PROBE_PERIOD_MILLIS));
                }
            }));
        }
    }

    private void count(RuntimeException ex) {
        errors.computeIfAbsent(ex.getClass().getSimpleName(), kind -> new LongAdder()).increment();
        firstErrors.putIfAbsent(ex.getClass().getSimpleName(), String.valueOf(ex.getMessage()));
    }

    /**
     * Right after the failover, each instance tries to take every probe lock the other
     * instance still reports held, without waiting. A lock the old master granted but the
     * new master never got is free there: taking it while its first holder still reports
     * it held is an exclusion violation, the one a failover causes. Whatever is taken is
     * released at once.
     */
    void tryToTakeOverProbes() {
        for (Tracked tracked : List.copyOf(held)) {
            if (!tracked.probe() || !tracked.handle().isHeld()) {
                continue;
            }
            LockApplication other = apps.get((apps.indexOf(tracked.app()) + 1) % apps.size());
            Optional<LockHandle> taken;
            try {
                taken = other.lockService()
                    .tryLock(LockRequest.of(tracked.handle().key())
                        .withTtl(CONTENDED_TTL)
                        .withWaitTime(Duration.ZERO)
                        .withWatchdog(false));
            }
            catch (RuntimeException ex) {
                count(ex);
                continue;
            }
            if (taken.isPresent()) {
                if (tracked.handle().isHeld()) {
                    takeoverViolations.incrementAndGet();
                    violationDetails.add(tracked.what() + " taken by the other instance " + sinceFailover()
                            + " while its holder still reported it held");
                }
                try {
                    taken.get().release();
                }
                catch (RuntimeException ex) {
                    count(ex);
                }
            }
        }
    }

    /**
     * Both instances, which have threads waiting, are subscribed where the topology says
     * they should be: at least one subscription each. (That they deliver is what
     * {@link #assertHandOverWakesWaiter} shows.)
     */
    void assertSubscribed(String when) {
        await().atMost(Duration.ofSeconds(15))
            .untilAsserted(() -> assertThat(topology.subscribers(CHANNEL)).as("%s: subscriptions to %s", when, CHANNEL)
                .isGreaterThanOrEqualTo(apps.size()));
    }

    // ------------------------------------------------------------------------------------------
    // the failover

    /** Call right before the failover command goes out. */
    void failoverStarts() {
        failoverStartNanos = System.nanoTime();
    }

    /** The monitor saw the new master named (Sentinel) or promoted (Cluster). */
    void switched(long nanos) {
        switchNanos = nanos;
    }

    /**
     * The monitor saw the old master stop taking writes (it reports the replica role): a
     * lock command that starts after this can only succeed on the new master.
     */
    void cutOver(long nanos) {
        cutoverNanos = nanos;
    }

    // ------------------------------------------------------------------------------------------
    // after the failover

    /** Stops contention and probes, and waits for their threads. */
    void stopTraffic() throws Exception {
        stop.set(true);
        for (Future<?> future : traffic) {
            future.get(CONTENDED_WAIT.toSeconds() + 20, TimeUnit.SECONDS);
        }
    }

    /**
     * Locking resumed on the new master: a probe that began after the master switched and
     * was kept (so the new master has it; the old one took writes until the cutover, and
     * lost them) succeeded, within {@link #RESUME_BOUND} of the failover's start. Call
     * after {@link #assertHeldLocksKeptOrReportedLost()}, which tells the kept from the
     * lost.
     * @return when, in ms after the failover started
     */
    long assertResumed() {
        assertThat(switchNanos).as("the monitor saw the switch").isNotZero();
        assertThat(cutoverNanos).as("the monitor saw the cutover").isNotZero();
        assertThat(keptHandles).as("held locks judged first").isNotNull();
        Optional<Probe> first = probes.stream()
            .filter(probe -> probe.startNanos() - switchNanos > 0 && keptHandles.contains(probe.handle()))
            .min((a, b) -> Long.compare(a.endNanos(), b.endNanos()));
        assertThat(first)
            .as("a probe that began after the switch was kept (%d probes, errors %s)", probes.size(), errors)
            .isPresent();
        resumeMillis = millisSinceFailover(first.get().endNanos());
        assertThat(Duration.ofMillis(resumeMillis)).as("locking resumed after the failover")
            .isLessThanOrEqualTo(RESUME_BOUND);
        return resumeMillis;
    }

    /**
     * Every handle held across the failover is kept (held, its token in the key on the
     * new master) or reported lost (lost, and a {@link LockLostEvent} published for it),
     * within a lease and a renewal; never held while Redis holds another token or none.
     */
    void assertHeldLocksKeptOrReportedLost() {
        List<Tracked> all = List.copyOf(held);
        Map<Tracked, String> undecided = new LinkedHashMap<>();
        try {
            await().atMost(HELD_TTL.multipliedBy(2).plusSeconds(5))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> judge(all, undecided));
        }
        catch (ConditionTimeoutException ex) {
            // The assertion below names the handles still undecided.
        }
        assertThat(kept + lost).as("handles judged (undecided: %s)", undecided).isEqualTo(all.size());
    }

    /**
     * One look at every handle and at Redis; true when each handle is kept or reported
     * lost.
     */
    private boolean judge(List<Tracked> all, Map<Tracked, String> undecided) {
        undecided.clear();
        Map<String, String> inRedis = topology
            .read(all.stream().map(tracked -> HandleTokens.redisKeyOf(tracked.handle())).toList());
        Set<LockHandle> keptNow = Collections.newSetFromMap(new IdentityHashMap<>());
        int lostNow = 0;
        for (Tracked tracked : all) {
            LockHandle handle = tracked.handle();
            boolean heldNow = handle.isHeld();
            String value = inRedis.get(HandleTokens.redisKeyOf(handle));
            if (heldNow && HandleTokens.tokenOf(handle).equals(value)) {
                keptNow.add(handle);
            }
            else if (handle.isLost() && !heldNow && reportedLost(tracked)) {
                lostNow++;
            }
            else {
                undecided.put(tracked,
                        "held=" + heldNow + " lost=" + handle.isLost() + " event=" + reportedLost(tracked) + " key "
                                + (value == null ? "missing"
                                        : HandleTokens.tokenOf(handle).equals(value) ? "ours" : "another's"));
            }
        }
        keptHandles = keptNow;
        kept = keptNow.size();
        lost = lostNow;
        return undecided.isEmpty();
    }

    private static boolean reportedLost(Tracked tracked) {
        return tracked.app()
            .lostLeases()
            .stream()
            .map(LockLostEvent::getHandle)
            .anyMatch(handle -> handle == tracked.handle());
    }

    /** Zero exclusion violations; asserted with replica acks, only reported without. */
    void assertNoViolationWithReplicaAcks() {
        assertThat(contendedAcquisitions.sum()).as("contended acquisitions (errors %s)", errors).isPositive();
        if (acks > 0) {
            assertThat(violationDetails).as("exclusion violations with replica-acks=%d", acks).isEmpty();
        }
    }

    /**
     * Releases every held lock; the threads waiting for some of them get them (the
     * release hands them over) with their token in the key on the new master, and release
     * them in turn.
     */
    void releaseHeldAndServeWaiters() throws Exception {
        for (Tracked tracked : held) {
            try {
                tracked.handle().release();
            }
            catch (RuntimeException ex) {
                count(ex);
            }
        }
        for (Future<LockHandle> waiter : waiters) {
            LockHandle handle = waiter.get(30, TimeUnit.SECONDS);
            String key = HandleTokens.redisKeyOf(handle);
            assertThat(handle.isHeld()).as("the waiter for %s holds it", handle.key()).isTrue();
            assertThat(topology.read(List.of(key))).as("%s on the new master", key)
                .containsEntry(key, HandleTokens.tokenOf(handle));
            assertThat(handle.release()).isTrue();
        }
    }

    /**
     * A release after the failover wakes a waiter of the other instance through its
     * subscription: in at least one of three hand-overs, the only acquire or release
     * script the master ran on the lock between the release and the waiter returning with
     * the lock was that release, so the waiter took the hand-over without polling. (With
     * replica acks, the waiter's confirmation of a hand-over is a renewal script, one
     * key, not counted.) One hand-over alone could meet the waiter's periodic re-check;
     * three in a row only if the wake-up never comes.
     */
    void assertHandOverWakesWaiter(LockApplication holder, LockApplication waiter, String name) throws Exception {
        List<String> polled = new ArrayList<>();
        // One lock name for all three: a subscription per slot, if the instance
        // subscribes so, is then in place
        // from the second hand-over on.
        String lockName = name;
        for (int attempt = 1; attempt <= 3; attempt++) {
            LockHandle first = holder.lockService()
                .lock(LockRequest.of(lockName)
                    .withTtl(Duration.ofSeconds(30))
                    .withWaitTime(Duration.ZERO)
                    .withWatchdog(false));
            String key = HandleTokens.redisKeyOf(first);
            RedisTestServer master = topology.masterOf(key);
            int waitingBefore = waiter.bean(LockWaiters.class).waiting();
            Future<LockHandle> next = threads.submit(() -> waiter.lockService()
                .lock(LockRequest.of(lockName)
                    .withTtl(Duration.ofSeconds(30))
                    .withWaitTime(Duration.ofSeconds(20))
                    .withWatchdog(false)));
            await().atMost(Duration.ofSeconds(10))
                .until(() -> waiter.bean(LockWaiters.class).waiting() > waitingBefore
                        && (Long) master.command("ZCARD", key + ":queue") == 1);
            List<String> scripts;
            try (RespConnection monitor = RespConnection.open(master.host(), master.port(), Duration.ofSeconds(10))) {
                assertThat(monitor.command("MONITOR")).isEqualTo("OK");
                assertThat(first.release()).isTrue();
                LockHandle handedOver = next.get(20, TimeUnit.SECONDS);
                assertThat(topology.read(List.of(key))).containsEntry(key, HandleTokens.tokenOf(handedOver));
                assertThat(handedOver.release()).isTrue();
                scripts = lockScriptsUntilReleased(monitor, master, key);
            }
            // The release, then the waiter's release of the handed-over lock: nothing in
            // between.
            if (scripts.size() == 2) {
                return;
            }
            polled.add("hand-over " + attempt + ": " + scripts);
        }
        throw new AssertionError("The waiter was never woken by the release message after the failover: it "
                + "polled every time (" + polled + ")");
    }

    /**
     * The acquire and release scripts (four keys) the master ran on {@code key} since
     * {@code MONITOR} started, read up to a marker sent afterwards, so that every command
     * before it has been seen.
     */
    private static List<String> lockScriptsUntilReleased(RespConnection monitor, RedisTestServer master, String key)
            throws IOException {
        String marker = "failover-drill-" + System.nanoTime();
        master.command("ECHO", marker);
        List<String> scripts = new ArrayList<>();
        while (true) {
            String line = String.valueOf(monitor.readReply());
            if (line.contains(marker)) {
                return scripts;
            }
            // e.g. 1700000000.123456 [0 127.0.0.1:41234] "EVALSHA" "<sha>" "4" "lock:{a}"
            // ...
            boolean script = line.contains("\"EVALSHA\" ") || line.contains("\"EVAL\" ");
            if (script && line.contains("\" \"4\" \"" + key + "\"")) {
                scripts.add(line.substring(0, Math.min(line.length(), 120)));
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // figures

    /**
     * The one-line summary the failover figures in the docs come from, e.g.
     * {@code FAILOVER-FIGURES sentinel acks=0 client=lettuce resume=1234ms kept=3 lost=0 violations=0 ...};
     * -1 for what was not measured (a check failed before it).
     */
    String figures() {
        return "FAILOVER-FIGURES " + topologyName + " acks=" + acks + " client=" + client + " resume=" + resumeMillis
                + "ms kept=" + kept + " lost=" + lost + " violations=" + (violations.get() + takeoverViolations.get())
                + " contention-violations=" + violations.get() + " takeover-violations=" + takeoverViolations.get()
                + " switch=" + millisSinceFailover(switchNanos) + "ms cutover=" + millisSinceFailover(cutoverNanos)
                + "ms stall=" + longestStallMillis() + "ms contended-acquisitions=" + contendedAcquisitions.sum()
                + " probes=" + probes.size() + " errors=" + errorsText() + (violationDetails.isEmpty() ? ""
                        : " first-violations=" + violationDetails.subList(0, Math.min(3, violationDetails.size())));
    }

    /**
     * The first message of each kind of error the instances reported during the drill,
     * one line.
     */
    String errorSamples() {
        return "FAILOVER-ERRORS " + topologyName + " acks=" + acks + " client=" + client + " "
                + new TreeMap<>(firstErrors);
    }

    /** The longest time, from the failover's start on, in which no probe succeeded. */
    private long longestStallMillis() {
        long previous = failoverStartNanos;
        long longest = 0;
        List<Long> ends = probes.stream()
            .filter(probe -> probe.handle() != null)
            .map(Probe::endNanos)
            .filter(end -> end - failoverStartNanos > 0)
            .sorted()
            .toList();
        for (long end : ends) {
            longest = Math.max(longest, end - previous);
            previous = end;
        }
        return TimeUnit.NANOSECONDS.toMillis(longest);
    }

    private String errorsText() {
        Map<String, Long> counts = new TreeMap<>();
        errors.forEach((kind, count) -> counts.put(kind, count.sum()));
        return counts.toString().replace(" ", "");
    }

    private long millisSinceFailover(long nanos) {
        return nanos == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(nanos - failoverStartNanos);
    }

    private String sinceFailover() {
        return failoverStartNanos == 0 ? "before the failover"
                : millisSinceFailover(System.nanoTime()) + " ms after the failover started";
    }

    /** A condition on a node's role, for the monitors of the tests. */
    static Predicate<RedisTestServer> role(String role) {
        return node -> {
            try {
                return role.equals(node.infoValue("replication", "role"));
            }
            catch (RuntimeException ex) {
                return false;
            }
        };
    }

    /**
     * Starts a daemon thread that runs {@code check} every 5 ms until it returns true or
     * the drill closes.
     */
    void monitor(LongPredicate check) {
        threads.submit(() -> {
            while (!closed && !Thread.currentThread().isInterrupted()) {
                if (check.test(System.nanoTime())) {
                    return;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
        });
    }

    /** Stops every thread and releases whatever is still held, quietly. */
    @Override
    public void close() {
        closed = true;
        stop.set(true);
        for (Tracked tracked : held) {
            try {
                tracked.handle().release();
            }
            catch (RuntimeException ex) {
                // The instance closes next; its leases run out.
            }
        }
        waiters.forEach(waiter -> waiter.cancel(true));
        threads.shutdownNow();
    }

}
