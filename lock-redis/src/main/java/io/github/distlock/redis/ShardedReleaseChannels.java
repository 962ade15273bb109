package io.github.distlock.redis;

/**
 * The old name of {@link ShardedHandOverChannels}, kept so that code which builds one
 * keeps compiling: the channels are the same.
 *
 * @deprecated the signal is a hand-over to the next waiter: use
 * {@link ShardedHandOverChannels}
 */
@Deprecated(since = "0.1.0")
public final class ShardedReleaseChannels extends ShardedHandOverChannels {

    /** @see ShardedHandOverChannels#ShardedHandOverChannels(String) */
    public ShardedReleaseChannels(String keyPrefix) {
        super(keyPrefix);
    }

}
