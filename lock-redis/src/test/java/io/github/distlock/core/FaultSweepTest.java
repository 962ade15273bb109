package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.github.distlock.LockHandle;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * Every lock operation under every fault of the proxy, with the invariants checked from
 * Redis itself ({@link SweepCase}). The default sweep runs each pair once, the fault
 * squarely on the operation's command; the long sweep ({@code -Dsweep.long=true}) draws
 * the timing of every case at random from a printed seed, for as long as
 * {@code -Dsweep.minutes} (5 by default):
 *
 * <pre>
 * ./mvnw -B -q -pl lock-spring-boot-autoconfigure -am verify -Dtest='FaultSweepTest' \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Dsweep.long=true -Dsweep.minutes=5 [-Dsweep.seed=42]
 * </pre>
 *
 * {@code -Dsweep.verbose=true} prints the timeline of every case. One case of the long
 * sweep reruns with {@code -Dsweep.caseSeed=<seed> -Dsweep.operations=<OPERATION>
 * -Dsweep.faults=<FAULT>}, the values its report prints.
 */
class FaultSweepTest {

    private static final Duration OPERATION_TIMEOUT = Duration.ofMillis(200);

    private static final long DEFAULT_SEED = 20261124L;

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension();

    private static ProxiedLockServices services;

    private static ExecutorService callers;

    private static ScheduledExecutorService faults;

    private static HeldHandleMonitor monitor;

    private static final AtomicInteger cases = new AtomicInteger();

    private static final List<String> figures = Collections.synchronizedList(new ArrayList<>());

    private static long startedNanos;

    @BeforeAll
    static void start() {
        startedNanos = System.nanoTime();
        callers = Executors.newCachedThreadPool(daemon("sweep-caller"));
        faults = Executors.newSingleThreadScheduledExecutor(daemon("sweep-faults"));
        services = ProxiedLockServices.start(redisExtension.server(), OPERATION_TIMEOUT);
        monitor = new HeldHandleMonitor(redisExtension.server());
    }

    @AfterAll
    static void stop() throws Exception {
        if (monitor != null) {
            monitor.close();
        }
        faults.shutdownNow();
        callers.shutdownNow();
        if (services != null) {
            services.close();
        }
        System.out.printf(Locale.ROOT, "Fault sweep: %d case(s) in %.1f s%n", cases.get(),
                (System.nanoTime() - startedNanos) / 1e9);
        figures.forEach(System.out::println);
    }

    @AfterEach
    void healWhateverAFailedCaseLeft() {
        services.heal();
    }

    static Stream<Arguments> everyOperationUnderEveryFault() {
        return Arrays.stream(SweepOperation.values())
            .flatMap(operation -> Arrays.stream(SweepFault.values()).map(fault -> Arguments.of(operation, fault)));
    }

    @ParameterizedTest(name = "{0}, with {1}")
    @MethodSource("everyOperationUnderEveryFault")
    void everyOperationKeepsTheLockInvariantsUnderEveryFault(SweepOperation operation, SweepFault fault) {
        SweepCase sweepCase = newCase(operation, fault, SweepTiming.fixed(OPERATION_TIMEOUT));
        long started = System.nanoTime();
        List<String> violations = run(sweepCase);
        figures.add(String.format(Locale.ROOT, "  %-15s x %-32s %5d ms  %s", operation.name(), fault.name(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), String.join("; ", sweepCase.outcomes())));
        assertThat(violations).as(sweepCase::report).isEmpty();
    }

    /**
     * The checks must be able to fail: a key deleted behind a holder's back, and fencing
     * tokens out of order.
     */
    @Test
    void theInvariantChecksReportAHeldHandleWhoseKeyIsGoneAndAFencingTokenOutOfOrder() {
        SweepCase sweepCase = newCase(SweepOperation.RELEASE, SweepFault.DELAY_WITHIN_THE_TIMEOUT,
                SweepTiming.fixed(OPERATION_TIMEOUT));
        LockHandle handle = sweepCase
            .track(services.proxied.service.lock(sweepCase.name, Duration.ofSeconds(30), Duration.ZERO));

        sweepCase.checkHeldHandles(services::lockValue);
        services.redis.del(sweepCase.redisKey);
        sweepCase.checkHeldHandles(services::lockValue);
        sweepCase.recordFencingToken("the first call", 2);
        sweepCase.recordFencingToken("the second call", 1);

        assertThat(sweepCase.violations()).hasSize(2)
            .satisfiesExactly(held -> assertThat(held).contains("reports the lock held while Redis holds nothing"),
                    fencing -> assertThat(fencing).contains("fencing token 1 from the second call is not above 2"));
        handle.release();
    }

    @Test
    @EnabledIfSystemProperty(named = "sweep.long", matches = "true")
    void randomFaultTimingOverManyRoundsKeepsTheLockInvariants() {
        long seed = Long.getLong("sweep.seed", DEFAULT_SEED);
        Long caseSeed = Long.getLong("sweep.caseSeed");
        Duration budget = Duration
            .ofMillis((long) (Double.parseDouble(System.getProperty("sweep.minutes", "5")) * 60_000));
        Set<SweepOperation> operations = selected(SweepOperation.class, "sweep.operations");
        Set<SweepFault> chosenFaults = selected(SweepFault.class, "sweep.faults");
        System.out.println("Long fault sweep: seed " + seed + (caseSeed != null ? ", case seed " + caseSeed : "") + ", "
                + budget.toSeconds() + " s, " + operations.size() + " operations x " + chosenFaults.size()
                + " faults; rerun with -Dsweep.long=true -Dsweep.seed=" + seed);

        Random random = new Random(seed);
        Map<String, int[]> tried = new LinkedHashMap<>();
        List<String> reports = new ArrayList<>();
        long deadline = System.nanoTime() + budget.toNanos();
        int rounds = 0;
        int violations = 0;
        do {
            rounds++;
            List<SweepOperation> shuffledOperations = new ArrayList<>(operations);
            Collections.shuffle(shuffledOperations, random);
            for (SweepOperation operation : shuffledOperations) {
                List<SweepFault> shuffledFaults = new ArrayList<>(chosenFaults);
                Collections.shuffle(shuffledFaults, random);
                for (SweepFault fault : shuffledFaults) {
                    if (caseSeed == null && System.nanoTime() - deadline > 0) {
                        break;
                    }
                    long thisCaseSeed = caseSeed != null ? caseSeed : random.nextLong();
                    SweepCase sweepCase = newCase(operation, fault,
                            SweepTiming.random(OPERATION_TIMEOUT, new Random(thisCaseSeed)));
                    List<String> found = run(sweepCase);
                    services.heal();
                    int[] counts = tried.computeIfAbsent(operation.name() + " x " + fault.name(), key -> new int[2]);
                    counts[0]++;
                    counts[1] += found.size();
                    violations += found.size();
                    if (!found.isEmpty()) {
                        String report = "Case seed " + thisCaseSeed + " (-Dsweep.caseSeed=" + thisCaseSeed
                                + " -Dsweep.operations=" + operation.name() + " -Dsweep.faults=" + fault.name() + "): "
                                + sweepCase.report();
                        reports.add(report);
                        System.out.println(report);
                    }
                }
            }
        }
        while (caseSeed == null && System.nanoTime() - deadline < 0);

        int total = tried.values().stream().mapToInt(counts -> counts[0]).sum();
        System.out.println("Long fault sweep, seed " + seed + ": " + rounds + " round(s), " + total + " case(s) over "
                + tried.size() + " operation x fault pairs, " + violations + " violation(s)");
        tried.forEach((pair, counts) -> System.out.printf(Locale.ROOT, "  %-50s %4d tried %4d violations%n", pair,
                counts[0], counts[1]));
        assertThat(reports).as("violations of the long sweep, seed " + seed).isEmpty();
    }

    private static SweepCase newCase(SweepOperation operation, SweepFault fault, SweepTiming timing) {
        String name = "sweep:" + cases.incrementAndGet() + ":" + operation.name().toLowerCase(Locale.ROOT);
        return new SweepCase(operation, fault, timing, name, services, callers, faults);
    }

    private static List<String> run(SweepCase sweepCase) {
        monitor.watch(sweepCase);
        try {
            return sweepCase.run();
        }
        finally {
            monitor.watch(null);
            if (Boolean.getBoolean("sweep.verbose")) {
                System.out.println(sweepCase.report());
            }
        }
    }

    private static <E extends Enum<E>> Set<E> selected(Class<E> type, String property) {
        String names = System.getProperty(property);
        if (names == null || names.isBlank()) {
            return EnumSet.allOf(type);
        }
        return Arrays.stream(names.split(","))
            .map(String::trim)
            .map(name -> Enum.valueOf(type, name))
            .collect(Collectors.toCollection(() -> EnumSet.noneOf(type)));
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

}
