/**
 * Spring Integration on this starter: a {@code LockRegistry} backed by the
 * {@code LockService}, and its auto-configuration.
 */
@NullMarked
package io.github.distlock.integration;

import org.jspecify.annotations.NullMarked;
