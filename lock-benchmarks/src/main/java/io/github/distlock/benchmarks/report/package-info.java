/**
 * Turns {@code jmh.json} and {@code harness.json} into {@code docs/benchmarks.md}:
 * medians over forks, tables per scenario, the targets with pass/miss, charts drawn with
 * XChart, the machine and versions.
 */
package io.github.distlock.benchmarks.report;
