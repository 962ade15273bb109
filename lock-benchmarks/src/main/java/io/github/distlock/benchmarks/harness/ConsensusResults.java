package io.github.distlock.benchmarks.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The contended runs of the consensus part ({@link ConsensusMain}), as stored in
 * {@code consensus-harness.json}, with the settings they ran with.
 *
 * @param forks the rounds: one fork (a fresh JVM) of every implementation per round
 * @param threads contending threads, each on a client of its own
 * @param warmupSeconds warm-up before each window
 * @param measureSeconds the window
 * @param waitMillis the wait limit of one acquisition
 * @param etcdVersion the version the etcd members reported
 * @param zooKeeperVersion the ZooKeeper jar the ensemble and the clients run
 * @param contended one result per implementation and fork
 * @param calls the server calls per cycle of every etcd and ZooKeeper implementation
 */
public record ConsensusResults(int forks, int threads, double warmupSeconds, double measureSeconds, long waitMillis,
        String etcdVersion, String zooKeeperVersion, List<ContendedResult> contended, List<CallProfile> calls) {

    /**
     * What the servers counted for one implementation: per uncontended cycle (one
     * thread), and per acquisition with {@code threads} clients on one key.
     *
     * @param implementation the {@code ConsensusImplementation} name
     * @param cycles uncontended cycles counted
     * @param perCycle counter growth per cycle: {@code writes} (Raft or Zab proposals),
     * {@code reads}, and per gRPC method (etcd) or watches fired (ZooKeeper)
     * @param acquisitions contended acquisitions counted
     * @param perAcquisition counter growth per contended acquisition
     */
    public record CallProfile(String implementation, long cycles, Map<String, Double> perCycle, long acquisitions,
            Map<String, Double> perAcquisition) {
    }

    /**
     * What must fail the run: violations (two holders at once), adapter errors and
     * timeouts, per implementation and fork.
     * @return one line per problem; empty when there is none
     */
    public List<String> problems() {
        List<String> problems = new ArrayList<>();
        for (ContendedResult result : contended) {
            if (result.violations() > 0) {
                problems.add(result.implementation() + ": " + result.violations()
                        + " violation(s), two holders at once, in a contended run");
            }
            if (!result.errors().isEmpty()) {
                problems.add(result.implementation() + ": adapter errors in a contended run: " + result.errors());
            }
            if (result.acquisitions() == 0) {
                problems.add(result.implementation() + ": no acquisition in the contended window");
            }
        }
        return problems;
    }

}
