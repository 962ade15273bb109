/**
 * ShedLock on this starter: a {@code LockProvider} backed by the {@code LockService}, and
 * its auto-configuration.
 */
@NullMarked
package io.github.distlock.shedlock;

import org.jspecify.annotations.NullMarked;
