package io.github.distlock.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import io.github.distlock.benchmarks.adapter.ConsensusImplementation;
import io.github.distlock.benchmarks.adapter.ConsensusImplementation.Store;
import io.github.distlock.benchmarks.adapter.ConsensusServers;
import io.github.distlock.benchmarks.adapter.ConsensusTarget;
import io.github.distlock.benchmarks.adapter.FirstUse;
import io.github.distlock.benchmarks.adapter.LockAdapter;
import io.github.distlock.benchmarks.adapter.RedisTarget;
import io.github.distlock.benchmarks.harness.Arguments;
import io.github.distlock.benchmarks.harness.ConsensusMain;
import io.github.distlock.benchmarks.harness.ConsensusResults;
import io.github.distlock.benchmarks.harness.ContendedResult;
import io.github.distlock.benchmarks.report.ReportMain;

/**
 * The consensus part of the suite, briefly, against a real 3-member etcd cluster and a
 * real 3-member ZooKeeper ensemble: every etcd and ZooKeeper adapter really writes its
 * lock into the store while it holds it and removes it on release, the JMH and contended
 * runs of every implementation complete without a violation or an error, and a
 * consensus-only report adds or replaces its section of an existing page and nothing
 * else. It proves that things run, not how fast; it writes under {@code target/} only.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsensusSmokeTest {

    private static final Path OUTPUT = Path.of("target", "bench-smoke-consensus");

    private static final Path JMH_JSON = OUTPUT.resolve("consensus-jmh.json");

    private static final Path HARNESS_JSON = OUTPUT.resolve("consensus-harness.json");

    @Test
    @Order(1)
    void everyEtcdAndZooKeeperAdapterHoldsItsLockInTheStoreAndRemovesItOnRelease() {
        try (ConsensusServers servers = ConsensusServers.start()) {
            ConsensusTarget target = servers.target(RedisTarget.DEFAULT_WAIT);
            for (ConsensusImplementation implementation : ConsensusImplementation.values()) {
                if (implementation.store() == Store.REDIS) {
                    // Ours on Redis is BenchmarkSmokeTest's OURS_SERVICE.
                    continue;
                }
                try (LockAdapter adapter = implementation.open(target)) {
                    FirstUse.cycle(adapter, "smoke:prime:" + implementation);
                    String key = "smoke-" + implementation.name().toLowerCase() + "-" + UUID.randomUUID();
                    AtomicReference<List<String>> whileHeld = new AtomicReference<>();

                    adapter.runLocked(key, () -> whileHeld.set(entriesNaming(implementation.store(), target, key)));

                    assertThat(whileHeld.get()).as(implementation + ": store entries naming the key while held")
                        .isNotEmpty();
                    assertThat(entriesNaming(implementation.store(), target, key))
                        .as(implementation + ": store entries naming the key after release")
                        .isEmpty();
                }
            }
        }
    }

    @Test
    @Order(2)
    void everyImplementationRunsUnderJmhAndContendedWithoutViolationsOrErrors() throws Exception {
        ConsensusResults results = ConsensusMain
            .run(Arguments.parse("--forks=0", "--warmup-iterations=0", "--iterations=1", "--iteration-time=200ms",
                    "--threads=4", "--contended-warmup=200ms", "--contended-measure=1s", "--call-cycles=20",
                    "--call-contended=1s", "--jmh-output=" + JMH_JSON, "--output=" + HARNESS_JSON));

        assertThat(results.problems()).as("violations, adapter errors, empty windows").isEmpty();
        assertThat(results.contended()).extracting(ContendedResult::implementation)
            .containsExactlyInAnyOrder(names(ConsensusImplementation.values()));
        assertThat(results.contended()).allSatisfy(result -> {
            assertThat(result.acquisitions()).as(result.implementation()).isPositive();
            assertThat(result.totalAcquisitions()).as(result.implementation()).isEqualTo(result.counterDelta());
            assertThat(result.perThread()).as(result.implementation()).hasSize(4);
        });
        assertThat(JMH_JSON).isNotEmptyFile();
        // Every etcd and ZooKeeper cycle writes at least twice (take, give back): the
        // servers' own counters saw it.
        assertThat(results.calls()).extracting(ConsensusResults.CallProfile::implementation)
            .containsExactlyInAnyOrder("OURS_ETCD", "JETCD_LOCK", "JETCD_LOCK_LEASE_PER_LOCK", "OURS_ZOOKEEPER",
                    "CURATOR_MUTEX", "SI_ZOOKEEPER");
        assertThat(results.calls()).allSatisfy(profile -> {
            assertThat(profile.perCycle().get("writes")).as(profile.implementation()).isGreaterThanOrEqualTo(1.9);
            assertThat(profile.acquisitions()).as(profile.implementation()).isPositive();
        });
    }

    @Test
    @Order(3)
    void jmhMeasuredEveryImplementationAtOneAndEightThreads() throws Exception {
        // The JSON of the run above, read back the way the report reads it.
        Collection<String> lines = Files.readAllLines(JMH_JSON);
        String json = String.join("\n", lines);
        for (String name : names(ConsensusImplementation.values())) {
            assertThat(json).as(name).contains("\"implementation\" : \"" + name + "\"");
        }
        assertThat(json).contains("ConsensusBenchmark.throughput1", "ConsensusBenchmark.throughput8",
                "ConsensusBenchmark.latency1");
    }

    @Test
    @Order(4)
    void aConsensusOnlyReportAddsItsSectionToAPageAndKeepsEveryOtherLine() throws Exception {
        Path page = OUTPUT.resolve("benchmarks.md");
        Files.copy(Path.of("..", "docs", "benchmarks.md"), page, StandardCopyOption.REPLACE_EXISTING);
        List<String> before = Files.readAllLines(page);

        List<String> problems = ReportMain.writeConsensusOnly(JMH_JSON, HARNESS_JSON, page, "(smoke test)");
        String once = Files.readString(page);
        ReportMain.writeConsensusOnly(JMH_JSON, HARNESS_JSON, page, "(smoke test)");
        String twice = Files.readString(page);

        assertThat(problems).isEmpty();
        assertThat(once).contains("## 7. Consensus stores: etcd and ZooKeeper",
                "| Consensus: etcd uncontended ≥ 0.9× jetcd Lock, one lease per client, 1 thread",
                "| Consensus: ZooKeeper contended owner switches/s ≥ the best peer on ZooKeeper",
                "| Curator InterProcessMutex | ZooKeeper |", "### Server calls per cycle", "Short settings",
                "(smoke test)");
        assertThat(withoutConsensusPart(once.lines().toList())).as("every line but the consensus part")
            .isEqualTo(withoutConsensusPart(before));
        assertThat(twice.replaceAll("Regenerated on its own at [^,]+,", ""))
            .as("a second run replaces the part instead of adding another")
            .isEqualTo(once.replaceAll("Regenerated on its own at [^,]+,", ""));
    }

    private static String[] names(ConsensusImplementation[] implementations) {
        List<String> names = new ArrayList<>();
        for (ConsensusImplementation implementation : implementations) {
            names.add(implementation.name());
        }
        return names.toArray(String[]::new);
    }

    /** The page without the consensus section (and the blank line after it) and rows. */
    private static List<String> withoutConsensusPart(List<String> page) {
        List<String> kept = new ArrayList<>(page);
        int begin = -1;
        for (int i = 0; i < kept.size() && begin < 0; i++) {
            if (kept.get(i).startsWith("<!-- consensus:begin")) {
                begin = i;
            }
        }
        if (begin >= 0) {
            kept.subList(begin, kept.indexOf("<!-- consensus:end -->") + 2).clear();
        }
        kept.removeIf(line -> line.startsWith("| Consensus: "));
        return kept;
    }

    /** Every etcd key, or every ZooKeeper node path, that contains {@code name}. */
    private static List<String> entriesNaming(Store store, ConsensusTarget target, String name) {
        return store == Store.ETCD ? etcdKeysNaming(target, name) : zooKeeperPathsNaming(target, name);
    }

    private static List<String> etcdKeysNaming(ConsensusTarget target, String name) {
        ByteSequence everything = ByteSequence.from(new byte[] { 0 });
        try (Client client = Client.builder().endpoints(target.etcdEndpoints().toArray(String[]::new)).build()) {
            List<KeyValue> all = client.getKVClient()
                .get(everything, GetOption.builder().withRange(everything).withKeysOnly(true).build())
                .get(10, TimeUnit.SECONDS)
                .getKvs();
            return all.stream()
                .map(kv -> kv.getKey().toString(StandardCharsets.UTF_8))
                .filter(key -> key.contains(name))
                .toList();
        }
        catch (Exception ex) {
            throw new IllegalStateException("cannot list the etcd keys", ex);
        }
    }

    private static List<String> zooKeeperPathsNaming(ConsensusTarget target, String name) {
        try (CuratorFramework client = CuratorFrameworkFactory.newClient(target.zooKeeperConnectString(),
                new RetryOneTime(100))) {
            client.start();
            client.blockUntilConnected(10, TimeUnit.SECONDS);
            List<String> found = new ArrayList<>();
            collect(client, "/", name, found);
            return found;
        }
        catch (Exception ex) {
            throw new IllegalStateException("cannot list the ZooKeeper nodes", ex);
        }
    }

    /**
     * Adds the nodes below {@code path} that sit in a directory naming {@code name}: the
     * nodes a holder writes. The directory itself may outlive the lock (a container node
     * ZooKeeper removes later), so it does not count.
     */
    private static void collect(CuratorFramework client, String path, String name, List<String> found)
            throws Exception {
        for (String child : client.getChildren().forPath(path)) {
            String childPath = (path.equals("/") ? "" : path) + "/" + child;
            if (path.contains(name)) {
                found.add(childPath);
            }
            if (!childPath.equals("/zookeeper")) {
                collect(client, childPath, name, found);
            }
        }
    }

}
