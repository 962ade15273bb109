package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.function.Function;

import io.github.distlock.core.LockKey;

/**
 * Where release.lua publishes that it handed a lock over: always the global hand-over
 * channel ({@code <prefix>released}, {@code PUBLISH}), and in a Redis Cluster 7+ with
 * sharded pub/sub a shard channel in the lock's own slot ({@code SPUBLISH}) in its place.
 *
 * <pre>{@code
 * HandOverChannel.global("lock:released")                          // PUBLISH lock:released ...
 * HandOverChannel.sharded("lock:released", "lock:released:{1234}") // SPUBLISH lock:released:{1234} ...
 * }</pre>
 */
public sealed class HandOverChannel permits ReleaseChannel {

    private final byte[] global;

    private final byte[] sharded;

    HandOverChannel(String global, String sharded) {
        this.global = global.getBytes(StandardCharsets.UTF_8);
        this.sharded = sharded == null ? null : sharded.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Announce with {@code PUBLISH} on {@code channel}, which every node of a Cluster
     * forwards to every other.
     */
    public static HandOverChannel global(String channel) {
        return new HandOverChannel(channel, null);
    }

    /**
     * Announce with {@code SPUBLISH} on {@code shardChannel}, which must hash to the
     * lock's slot; on a node that cannot (before Redis 7), with {@code PUBLISH} on
     * {@code globalChannel}.
     */
    public static HandOverChannel sharded(String globalChannel, String shardChannel) {
        return new HandOverChannel(globalChannel, shardChannel);
    }

    /** The same global channel for every key. */
    public static Function<LockKey, HandOverChannel> forEveryKey(String globalChannel) {
        HandOverChannel channel = global(globalChannel);
        return key -> channel;
    }

    /** Whether the message goes to the lock's shard only. */
    public boolean isSharded() {
        return sharded != null;
    }

    /**
     * release.lua's arguments from ARGV[2] on, after the token: the channels and the
     * counter lifetime.
     */
    byte[][] releaseArguments(byte[] token, byte[] counterLifetime) {
        return sharded == null ? new byte[][] { token, global, counterLifetime }
                : new byte[][] { token, global, counterLifetime, sharded };
    }

    @Override
    public String toString() {
        return sharded == null ? "PUBLISH " + new String(global, StandardCharsets.UTF_8)
                : "SPUBLISH " + new String(sharded, StandardCharsets.UTF_8);
    }

}
