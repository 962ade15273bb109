/**
 * Locks over a resource split into segments, for a hot key whose one lock would serialise every
 * request: {@link io.github.distlock.segment.SegmentedLock}.
 */
package io.github.distlock.segment;
