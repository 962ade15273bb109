/**
 * The API an application uses to lock:
 * {@link io.github.distlock.DistributedLock @DistributedLock} for methods,
 * {@link io.github.distlock.LockService} to lock in code, the
 * {@link io.github.distlock.LockHandle} of one acquisition (and
 * {@link io.github.distlock.MultiLockHandle} of several), the
 * {@link io.github.distlock.LockRequest} that describes one, the rules for keys and
 * durations ({@link io.github.distlock.LockKeys},
 * {@link io.github.distlock.LockDurations}), and the exceptions a failed acquisition or a
 * lost lease ends with.
 *
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring Framework 7:
 * a {@code null} ttl or wait time means the configured default, and a method that can
 * answer "none" says so.
 */
@NullMarked
package io.github.distlock;

import org.jspecify.annotations.NullMarked;
