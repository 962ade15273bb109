/**
 * The one implementation of acquire, wait and release
 * ({@link io.github.distlock.core.DefaultLockService}), the
 * {@link io.github.distlock.core.LeaseWatchdog} that renews held leases, the waiters that
 * hand-overs wake ({@link io.github.distlock.core.LockWaiters}), and the store-neutral
 * backend SPI: the few operations every store has
 * ({@link io.github.distlock.core.LockBackend}) and what a store may add as capabilities
 * (fencing tokens, a wait queue, hand-over wake-ups, inspection, non-blocking calls). The
 * {@link io.github.distlock.core.LockListener} seam that metrics, traces, the Actuator
 * and the lost-lease signals are built on lives here too.
 *
 * <p>
 * Non-null unless marked {@code @Nullable}.
 */
@NullMarked
package io.github.distlock.core;

import org.jspecify.annotations.NullMarked;
