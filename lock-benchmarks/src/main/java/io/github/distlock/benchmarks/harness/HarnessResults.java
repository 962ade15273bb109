package io.github.distlock.benchmarks.harness;

import java.util.ArrayList;
import java.util.List;

import io.github.distlock.benchmarks.adapter.Implementation;

import io.github.distlock.benchmarks.harness.RedlockPauseScenario.PauseResult;
import io.github.distlock.benchmarks.harness.RoundTripScenario.RoundTripResult;
import io.github.distlock.benchmarks.harness.WatchdogScenario.WatchdogResult;

/**
 * Everything the harness measured, as written to {@code harness.json}: raw results per
 * fork (the report takes the medians), plus what failed.
 *
 * @param settings what was run
 * @param contended scenario 2, one entry per implementation, mode and fork
 * @param roundTrips scenario 3, one entry per implementation
 * @param watchdog scenario 4, one entry per implementation and fork
 * @param processes scenario 5, one entry per implementation and fork
 * @param pause Redlock with a paused node, one entry per implementation and fork; empty
 * when not run
 * @param failures a line per scenario run that threw (implementation, scenario,
 * exception)
 * @param seconds how long the harness ran
 */
public record HarnessResults(HarnessSettings settings, List<ContendedResult> contended,
        List<RoundTripResult> roundTrips, List<WatchdogResult> watchdog, List<ContendedResult> processes,
        List<PauseResult> pause, List<String> failures, double seconds) {

    /** Results written before a scenario existed read as "not run". */
    public HarnessResults {
        contended = contended == null ? List.of() : contended;
        roundTrips = roundTrips == null ? List.of() : roundTrips;
        watchdog = watchdog == null ? List.of() : watchdog;
        processes = processes == null ? List.of() : processes;
        pause = pause == null ? List.of() : pause;
        failures = failures == null ? List.of() : failures;
    }

    /**
     * The problems that must fail a build: failures, adapter errors, violations, and
     * leases lost by ours (by anyone in the smoke).
     * @return one line per problem; empty when all is well
     */
    public List<String> problems() {
        List<String> problems = new ArrayList<>(failures);
        for (List<ContendedResult> results : List.of(contended, processes)) {
            for (ContendedResult result : results) {
                if (result.violations() != 0) {
                    problems.add(result.implementation() + " (" + result.mode() + "): " + result.violations()
                            + " violations (counter grew by " + result.counterDelta() + " for "
                            + result.totalAcquisitions() + " acquisitions)");
                }
                for (String error : result.errors()) {
                    problems.add(result.implementation() + " (" + result.mode() + "): " + error);
                }
                if (result.totalAcquisitions() == 0) {
                    problems.add(result.implementation() + " (" + result.mode() + "): no acquisition at all");
                }
            }
        }
        for (WatchdogResult result : watchdog) {
            // Ours must never lose a renewed lease. A peer that cannot keep thousands of
            // leases alive has
            // produced a result, not broken the benchmark, except in the smoke, whose few
            // hundred locks any
            // working renewal keeps.
            boolean ours = Implementation.valueOf(result.implementation()).role() == Implementation.Role.OURS;
            if (result.lost() != 0 && (ours || settings.profile().equals("smoke"))) {
                problems.add(result.implementation() + " (watchdog): " + result.lost() + " of " + result.locks()
                        + " leases expired while held");
            }
        }
        for (PauseResult result : pause) {
            // With a minority paused a Redlock must go on locking: any failure is a
            // problem, not a figure.
            if (result.failedCycles() != 0) {
                problems.add(result.implementation() + " (one node paused): " + result.failedCycles()
                        + " cycles failed: " + result.errors());
            }
            if (!result.recovered()) {
                problems.add(result.implementation() + " (one node paused): no lock after the node was continued: "
                        + result.errors());
            }
            if (result.healthyCycles() == 0 || result.pausedCycles() == 0) {
                problems.add(result.implementation() + " (one node paused): a window without a single cycle");
            }
        }
        for (RoundTripResult result : roundTrips) {
            if (result.clientCommandsPerCycle() <= 0) {
                problems.add(result.implementation() + " (round trips): MONITOR saw no command");
            }
            if (result.serverCpuMicrosPerCycle() <= 0) {
                problems.add(result.implementation() + " (round trips): the server's CPU time did not move");
            }
        }
        return problems;
    }
}
