/**
 * Scenarios 2 to 5, which need observations JMH does not make: contention on one key
 * (owner switches, fairness, waits, safety), server cost per cycle (commandstats and
 * MONITOR), the cost of renewing many leases, and contention across JVMs; and, for a
 * Redlock, cycles with one node paused
 * ({@link io.github.distlock.benchmarks.harness.RedlockPauseScenario}).
 * {@link io.github.distlock.benchmarks.harness.HarnessMain} runs them and writes
 * {@code harness.json}.
 */
package io.github.distlock.benchmarks.harness;
