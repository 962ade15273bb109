/**
 * Locks over a resource split into segments, for a hot key whose one lock would serialise
 * every request: {@link io.github.distlock.segment.SegmentedLock}.
 *
 * <p>
 * Non-null unless marked {@code @Nullable}.
 */
@NullMarked
package io.github.distlock.segment;

import org.jspecify.annotations.NullMarked;
