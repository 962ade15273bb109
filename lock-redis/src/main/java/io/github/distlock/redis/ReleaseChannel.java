package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.function.Function;

import io.github.distlock.core.LockKey;

/**
 * Where release.lua announces that it handed a lock over: always the global release channel
 * ({@code <prefix>released}, {@code PUBLISH}), and in a Redis Cluster 7+ with sharded pub/sub a
 * shard channel in the lock's own slot ({@code SPUBLISH}) in its place.
 *
 * <pre>{@code
 * ReleaseChannel.global("lock:released")                          // PUBLISH lock:released ...
 * ReleaseChannel.sharded("lock:released", "lock:released:{1234}") // SPUBLISH lock:released:{1234} ...
 * }</pre>
 */
public final class ReleaseChannel {

    private final byte[] global;
    private final byte[] sharded;

    private ReleaseChannel(String global, String sharded) {
        this.global = global.getBytes(StandardCharsets.UTF_8);
        this.sharded = sharded == null ? null : sharded.getBytes(StandardCharsets.UTF_8);
    }

    /** Announce with {@code PUBLISH} on {@code channel}, which every node of a Cluster forwards to every other. */
    public static ReleaseChannel global(String channel) {
        return new ReleaseChannel(channel, null);
    }

    /**
     * Announce with {@code SPUBLISH} on {@code shardChannel}, which must hash to the lock's slot; on a
     * node that cannot (before Redis 7), with {@code PUBLISH} on {@code globalChannel}.
     */
    public static ReleaseChannel sharded(String globalChannel, String shardChannel) {
        return new ReleaseChannel(globalChannel, shardChannel);
    }

    /** The same global channel for every key. */
    public static Function<LockKey, ReleaseChannel> everyKeyOn(String globalChannel) {
        ReleaseChannel channel = global(globalChannel);
        return key -> channel;
    }

    /** Whether the announcement goes to the lock's shard only. */
    public boolean isSharded() {
        return sharded != null;
    }

    /** release.lua's arguments from ARGV[2] on, after the token: the channels and the counter lifetime. */
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
