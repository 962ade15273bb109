/**
 * Scenario 1 under JMH: uncontended lock-and-unlock cycles, each thread on its own key.
 */
package io.github.distlock.benchmarks.jmh;
