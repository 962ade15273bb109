package io.github.distlock.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openjdk.jmh.results.RunResult;

import io.github.distlock.benchmarks.adapter.FirstUse;
import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.adapter.LockAdapter;
import io.github.distlock.benchmarks.adapter.RedisNodes;
import io.github.distlock.benchmarks.adapter.RedisTarget;
import io.github.distlock.benchmarks.harness.Arguments;
import io.github.distlock.benchmarks.harness.HarnessMain;
import io.github.distlock.benchmarks.harness.HarnessResults;
import io.github.distlock.benchmarks.harness.HarnessSettings;
import io.github.distlock.benchmarks.harness.Json;
import io.github.distlock.benchmarks.harness.RedlockPauseScenario.PauseResult;
import io.github.distlock.benchmarks.jmh.JmhMain;
import io.github.distlock.benchmarks.report.ReportMain;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * The Redlock part of the suite, briefly, against real redis-servers: both Redlock
 * adapters really lock over five independent servers, every Redlock scenario runs without
 * a violation or a failed cycle, and a Redlock-only report replaces the Redlock part of
 * an existing page and nothing else. Like the main smoke, it proves that things run, not
 * how fast; it writes under {@code target/} only. Ours runs with a node timeout of
 * {@value #NODE_TIMEOUT} instead of 50 ms: a build machine busy with other work cannot
 * promise 5 answers within 50 ms to eight cold JVMs, and a vote that times out is a
 * failed cycle here.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedlockSmokeTest {

    private static final Path OUTPUT = Path.of("target", "bench-smoke-redlock");

    private static final Path JMH_JSON = OUTPUT.resolve("redlock-jmh.json");

    private static final Path HARNESS_JSON = OUTPUT.resolve("redlock-harness.json");

    private static final String NODE_TIMEOUT = "1s";

    private static final List<Implementation> REDLOCKS = List.of(Implementation.OURS_REDLOCK,
            Implementation.REDISSON_REDLOCK);

    @Test
    @Order(1)
    void bothRedlocksHoldTheirLockOnAMajorityOfFiveServersAndReleaseItEverywhere() {
        for (Implementation implementation : REDLOCKS) {
            try (RedisNodes nodes = RedisNodes.start(Implementation.REDLOCK_NODES);
                    LockAdapter adapter = implementation.open(nodes.target(RedisTarget.DEFAULT_WAIT))) {
                String key = "smoke:" + implementation.name();
                // Ours trusts a node once it has checked it, which happens just after
                // connecting.
                FirstUse.cycle(adapter, "smoke:prime");
                AtomicReference<List<Long>> whileHeld = new AtomicReference<>();

                adapter.runLocked(key, () -> whileHeld.set(lockKeysPerNode(nodes)));

                assertThat(whileHeld.get()).as(implementation + ": lock keys per node while held")
                    .hasSize(Implementation.REDLOCK_NODES)
                    .filteredOn(count -> count == 1)
                    .hasSizeGreaterThanOrEqualTo(3);
                assertThat(lockKeysPerNode(nodes)).as(implementation + ": lock keys per node after release")
                    .containsOnly(0L);
            }
        }
    }

    @Test
    @Order(2)
    void uncontendedRunsUnderJmhForOursOnOneNodeBothRedlocksAndTheRedlockFloor() throws Exception {
        Collection<RunResult> results = JmhMain.run(Arguments.parse("--forks=0", "--warmup-iterations=0",
                "--iterations=1", "--iteration-time=200ms", "--methods=throughput1|throughput8|latency1",
                "--implementations=OURS_SERVICE,OURS_REDLOCK,REDISSON_REDLOCK,REDLOCK_FLOOR",
                "--redlock-node-timeout=" + NODE_TIMEOUT, "--output=" + JMH_JSON));

        assertThat(results).hasSize(4 * 3);
        assertThat(results).allSatisfy(result -> assertThat(result.getPrimaryResult().getSampleCount())
            .as(result.getParams().getBenchmark() + " " + result.getParams().getParam("implementation"))
            .isPositive());
    }

    @Test
    @Order(3)
    void contendedAndPausedNodeScenariosRunWithoutViolationsOrFailedCycles() throws Exception {
        HarnessResults results = HarnessMain.run(HarnessSettings
            .from(Arguments.parse("--profile=smoke", "--implementations=OURS_REDLOCK,REDISSON_REDLOCK",
                    "--scenarios=contended,pause", "--redlock-node-timeout=" + NODE_TIMEOUT)));
        Json.write(HARNESS_JSON, results);

        assertThat(results.problems()).as("violations, failed cycles, adapter errors and failures").isEmpty();
        assertThat(results.contended()).extracting(r -> r.implementation() + "/" + r.mode())
            .containsExactlyInAnyOrder("OURS_REDLOCK/isolated", "OURS_REDLOCK/shared", "REDISSON_REDLOCK/isolated",
                    "REDISSON_REDLOCK/shared");
        assertThat(results.contended()).allSatisfy(result -> {
            assertThat(result.acquisitions()).as(result.implementation() + " " + result.mode()).isPositive();
            assertThat(result.violations()).as(result.implementation() + " " + result.mode()).isZero();
        });
        assertThat(results.pause()).extracting(PauseResult::implementation).containsExactly("OURS_REDLOCK");
        PauseResult paused = results.pause().get(0);
        assertThat(paused.healthyCycles()).isPositive();
        assertThat(paused.pausedCycles()).isPositive();
        assertThat(paused.recovered()).isTrue();
        assertThat(results.roundTrips()).isEmpty();
        assertThat(results.watchdog()).isEmpty();
        assertThat(results.processes()).isEmpty();
    }

    @Test
    @Order(4)
    void aRedlockOnlyReportReplacesTheRedlockPartOfAPageAndKeepsEveryOtherLine() throws Exception {
        // The published page as the full suite last wrote it, copied so that docs/ is
        // never touched.
        Path page = OUTPUT.resolve("benchmarks.md");
        Path published = Path.of("..", "docs", "benchmarks.md");
        Files.copy(published, page, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        List<String> before = Files.readAllLines(page);

        List<String> problems = ReportMain.writeRedlockOnly(JMH_JSON, HARNESS_JSON, page, "(smoke test)");
        String once = Files.readString(page);
        ReportMain.writeRedlockOnly(JMH_JSON, HARNESS_JSON, page, "(smoke test)");
        String twice = Files.readString(page);

        assertThat(problems).isEmpty();
        assertThat(once).contains("## 6. Redlock over 5 nodes", "| Redlock, 5 nodes: uncontended 1-thread p50",
                "| Redlock, 5 nodes: one node of 5 paused", "Short settings", "(smoke test)");
        assertThat(OUTPUT.resolve("benchmarks-redlock.png")).isNotEmptyFile();
        // The published page may already have a Redlock part (the full suite writes one):
        // compare
        // both pages without it.
        assertThat(withoutRedlockPart(once.lines().toList())).as("every line but the Redlock part")
            .isEqualTo(withoutRedlockPart(before));
        assertThat(twice.replaceAll("Regenerated on its own at [^,]+,", ""))
            .as("a second run replaces the part instead of adding another")
            .isEqualTo(once.replaceAll("Regenerated on its own at [^,]+,", ""));
    }

    /**
     * {@code page} without its Redlock section (and the blank line after it) and Redlock
     * target rows.
     */
    private static List<String> withoutRedlockPart(List<String> page) {
        List<String> kept = new ArrayList<>(page);
        int begin = -1;
        for (int i = 0; i < kept.size() && begin < 0; i++) {
            if (kept.get(i).startsWith("<!-- redlock:begin")) {
                begin = i;
            }
        }
        if (begin >= 0) {
            kept.subList(begin, kept.indexOf("<!-- redlock:end -->") + 2).clear();
        }
        kept.removeIf(line -> line.startsWith("| Redlock, 5 nodes: "));
        return kept;
    }

    /**
     * On each node, whether a key of a Redlock implementation exists (ours: lock:...,
     * Redisson: redisson:...).
     */
    private static List<Long> lockKeysPerNode(RedisNodes nodes) {
        List<Long> counts = new ArrayList<>();
        for (RedisTestServer server : nodes.servers()) {
            long count = server.scan("lock:*").size() + server.scan("redisson:*").size();
            counts.add(count);
        }
        return counts;
    }

}
