/**
 * The implementations under test, each behind
 * {@link io.github.distlock.benchmarks.adapter.LockAdapter} (lock, run, unlock) and,
 * where it renews leases, {@link io.github.distlock.benchmarks.adapter.LeaseHolder} (hold
 * many locks at once). {@link io.github.distlock.benchmarks.adapter.Implementation} lists
 * them and opens one client of each.
 */
package io.github.distlock.benchmarks.adapter;
