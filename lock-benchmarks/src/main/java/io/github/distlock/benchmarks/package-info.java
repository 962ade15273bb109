/**
 * Benchmarks of the distributed lock against its peers (Redisson, Spring Integration's
 * {@code RedisLockRegistry}) and against the cheapest safe lock a client can do (the
 * Lettuce floor), on one Redis, and of ours as a Redlock over 5 independent Redis masters
 * against Redisson's RedLock.
 *
 * <ul>
 * <li>{@link io.github.distlock.benchmarks.adapter}: one small adapter per
 * implementation, so every scenario runs the same code path for each;</li>
 * <li>{@link io.github.distlock.benchmarks.jmh}: scenario 1 (uncontended cycles) under
 * JMH;</li>
 * <li>{@link io.github.distlock.benchmarks.harness}: scenarios 2 to 5 (contention, server
 * cost, watchdog cost, several JVMs) and a Redlock with one node paused, which need
 * measurements JMH does not make;</li>
 * <li>{@link io.github.distlock.benchmarks.report}: turns the JSON results into
 * {@code docs/benchmarks.md} and its chart.</li>
 * </ul>
 */
package io.github.distlock.benchmarks;
