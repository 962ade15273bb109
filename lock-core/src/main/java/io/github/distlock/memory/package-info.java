/**
 * A lock store in this JVM's memory,
 * {@link io.github.distlock.memory.InMemoryLockBackend}: every capability of the Redis
 * store, no server, for an application's unit tests and for single-JVM use. It passes the
 * same contract suite as the Redis backends.
 *
 * <p>
 * Non-null unless marked {@code @Nullable}.
 */
@NullMarked
package io.github.distlock.memory;

import org.jspecify.annotations.NullMarked;
