package io.github.distlock.redis;

import java.util.function.Function;

import io.github.distlock.core.LockKey;

/**
 * The old name of {@link HandOverChannel}, kept so that code which builds one keeps
 * compiling: the channels and the messages on them are the same.
 *
 * <pre>{@code
 * ReleaseChannel.everyKeyOn("lock:released")         // before
 * HandOverChannel.forEveryKey("lock:released")       // now
 * }</pre>
 *
 * @deprecated the signal is a hand-over to the next waiter: use {@link HandOverChannel}
 */
@Deprecated(since = "0.1.0")
public final class ReleaseChannel extends HandOverChannel {

    private ReleaseChannel(String global, String sharded) {
        super(global, sharded);
    }

    /** @see HandOverChannel#global(String) */
    public static ReleaseChannel global(String channel) {
        return new ReleaseChannel(channel, null);
    }

    /** @see HandOverChannel#sharded(String, String) */
    public static ReleaseChannel sharded(String globalChannel, String shardChannel) {
        return new ReleaseChannel(globalChannel, shardChannel);
    }

    /** @see HandOverChannel#forEveryKey(String) */
    public static Function<LockKey, ReleaseChannel> everyKeyOn(String globalChannel) {
        ReleaseChannel channel = global(globalChannel);
        return key -> channel;
    }

}
