package io.github.distlock.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openjdk.jmh.results.RunResult;

import io.github.distlock.benchmarks.adapter.Implementation;
import io.github.distlock.benchmarks.harness.Arguments;
import io.github.distlock.benchmarks.harness.ContendedResult;
import io.github.distlock.benchmarks.harness.HarnessMain;
import io.github.distlock.benchmarks.harness.HarnessResults;
import io.github.distlock.benchmarks.harness.HarnessSettings;
import io.github.distlock.benchmarks.harness.Json;
import io.github.distlock.benchmarks.harness.RoundTripScenario.RoundTripResult;
import io.github.distlock.benchmarks.harness.WatchdogScenario.WatchdogResult;
import io.github.distlock.benchmarks.jmh.JmhMain;
import io.github.distlock.benchmarks.report.ReportMain;

/**
 * The benchmark's smoke, run by every {@code ./mvnw verify}: every scenario once,
 * briefly, for every implementation, so that a change to the lock or to a peer's version
 * cannot silently break the benchmark. It fails on any violation, lost lease or adapter
 * error. It proves that things run, not how fast: the numbers are meaningless, and it
 * writes its page under {@code target/}, never to {@code docs/benchmarks.md}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BenchmarkSmokeTest {

    private static final Path OUTPUT = Path.of("target", "bench-smoke");

    private static final Path JMH_JSON = OUTPUT.resolve("jmh.json");

    private static final Path HARNESS_JSON = OUTPUT.resolve("harness.json");

    private static final Path PAGE = OUTPUT.resolve("benchmarks.md");

    private static final Path PUBLISHED_PAGE = Path.of("..", "docs", "benchmarks.md");

    /**
     * What {@code all} means: every implementation on one Redis (the Redlock ones have
     * RedlockSmokeTest).
     */
    private static final Set<String> ALL = Implementation.singleNode()
        .stream()
        .map(Enum::name)
        .collect(Collectors.toSet());

    @Test
    @Order(1)
    void scenario1RunsUnderJmhForEveryImplementation() throws Exception {
        // In this JVM (no fork) with one short iteration: enough to run the generated JMH
        // code and every
        // adapter at 1 and 8 threads. Errors fail the run (shouldFailOnError).
        Collection<RunResult> results = JmhMain
            .run(Arguments.parse("--forks=0", "--warmup-iterations=0", "--iterations=1", "--iteration-time=200ms",
                    "--methods=throughput1|throughput8|latency1", "--output=" + JMH_JSON));

        assertThat(results).hasSize(ALL.size() * 3);
        assertThat(results).allSatisfy(result -> assertThat(result.getPrimaryResult().getSampleCount())
            .as(result.getParams().getBenchmark() + " " + result.getParams().getParam("implementation"))
            .isPositive());
        assertThat(JMH_JSON).isNotEmptyFile();
    }

    @Test
    @Order(2)
    void scenarios2To5RunWithoutViolationsForEveryImplementation() throws Exception {
        // The full run's 3 s lease, held for two renewal periods: with the smoke's 1.5 s,
        // a peer renewing its 300
        // leases one call each lost 121 of them on a loaded machine, which says nothing
        // about whether it runs.
        HarnessResults results = HarnessMain
            .run(HarnessSettings.from(Arguments.parse("--profile=smoke", "--watchdog-ttl=3s", "--watchdog-hold=2s")));
        Json.write(HARNESS_JSON, results);

        assertThat(results.problems()).as("violations, lost leases, adapter errors and failures").isEmpty();
        assertThat(results.contended()).extracting(r -> r.implementation() + "/" + r.mode())
            .containsExactlyInAnyOrderElementsOf(
                    ALL.stream().flatMap(name -> List.of(name + "/isolated", name + "/shared").stream()).toList());
        assertThat(results.contended()).allSatisfy(ContendedResultCheck::madeProgress);
        assertThat(results.roundTrips()).extracting(RoundTripResult::implementation)
            .containsExactlyInAnyOrderElementsOf(ALL);
        assertThat(results.watchdog()).extracting(WatchdogResult::implementation)
            .containsExactlyInAnyOrderElementsOf(
                    Implementation.singleNode().stream().filter(Implementation::renewsLeases).map(Enum::name).toList());
        assertThat(results.processes()).extracting(ContendedResult::implementation)
            .containsExactlyInAnyOrderElementsOf(ALL);
        assertThat(results.processes()).allSatisfy(ContendedResultCheck::madeProgress);
    }

    @Test
    @Order(3)
    void reportIsWrittenUnderTargetOnly() throws Exception {
        long publishedBefore = Files.exists(PUBLISHED_PAGE) ? Files.getLastModifiedTime(PUBLISHED_PAGE).toMillis() : -1;

        List<String> problems = ReportMain.write(JMH_JSON, HARNESS_JSON, PAGE, "(smoke test)");

        assertThat(problems).isEmpty();
        assertThat(Files.readString(PAGE)).contains("## Targets", "## 1. Uncontended", "## 2. Contended",
                "## 3. Server cost", "## 4. Watchdog", "## 5. Contended across JVMs", "from a `smoke` run");
        assertThat(OUTPUT.resolve("benchmarks-throughput.png")).isNotEmptyFile();
        assertThat(OUTPUT.resolve("benchmarks-latency.png")).isNotEmptyFile();
        long publishedAfter = Files.exists(PUBLISHED_PAGE) ? Files.getLastModifiedTime(PUBLISHED_PAGE).toMillis() : -1;
        assertThat(publishedAfter).as("docs/benchmarks.md must not be touched by the smoke").isEqualTo(publishedBefore);
    }

    @Test
    @Order(4)
    void jmhForksRunInRoundsAndMergeIntoOneResultPerBenchmark() throws Exception {
        // Two rounds of two implementations, each fork a real JMH fork: four short JVMs.
        Path rounds = OUTPUT.resolve("rounds");
        Path json = rounds.resolve("jmh.json");
        Collection<RunResult> results = JmhMain
            .run(Arguments.parse("--forks=2", "--warmup-iterations=0", "--iterations=1", "--iteration-time=200ms",
                    "--methods=throughput1", "--implementations=FLOOR,SI_SPIN", "--output=" + json));

        assertThat(results).extracting(result -> result.getParams().getParam("implementation"))
            .containsExactlyInAnyOrder("FLOOR", "SI_SPIN");
        assertThat(results).allSatisfy(result -> assertThat(result.getBenchmarkResults())
            .as("forks of " + result.getParams().getParam("implementation"))
            .hasSize(2));
        for (var entry : Json.MAPPER.readTree(Files.readString(json))) {
            assertThat(entry.path("primaryMetric").path("rawData")).as("rawData rows, one per round").hasSize(2);
        }

        Path page = rounds.resolve("benchmarks.md");
        assertThat(ReportMain.write(json, HARNESS_JSON, page, "(smoke test)")).isEmpty();
        assertThat(Files.readString(page)).contains("2 forks in rounds");
    }

    /** Checks shared by the contended scenarios. */
    private static final class ContendedResultCheck {

        static void madeProgress(ContendedResult result) {
            assertThat(result.acquisitions()).as(result.implementation() + " " + result.mode() + " acquisitions")
                .isPositive();
            assertThat(result.violations()).as(result.implementation() + " " + result.mode() + " violations").isZero();
        }

    }

}
