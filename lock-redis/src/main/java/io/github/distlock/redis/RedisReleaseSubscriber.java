package io.github.distlock.redis;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.distlock.core.LockWaiters;

/**
 * The old name of {@link HandOverSubscriber}, kept so that code which builds one keeps
 * compiling: it subscribes to the same channel and passes on the same messages.
 *
 * <pre>{@code
 * new RedisReleaseSubscriber(factory, RedisReleaseSubscriber.releaseChannel("lock:"), waiters);   // before
 * new HandOverSubscriber(factory, HandOverSubscriber.handOverChannel("lock:"), waiters);          // now
 * }</pre>
 *
 * @deprecated the signal is a hand-over to the next waiter: use
 * {@link HandOverSubscriber}
 */
@Deprecated(since = "0.1.0")
public final class RedisReleaseSubscriber extends HandOverSubscriber {

    /**
     * @see HandOverSubscriber#HandOverSubscriber(RedisConnectionFactory, String,
     * LockWaiters)
     */
    public RedisReleaseSubscriber(RedisConnectionFactory connectionFactory, String channel, LockWaiters waiters) {
        super(connectionFactory, channel, waiters);
    }

    /**
     * @deprecated use {@link HandOverSubscriber#handOverChannel(String)}: the same
     * channel
     */
    @Deprecated(since = "0.1.0")
    public static String releaseChannel(String keyPrefix) {
        return handOverChannel(keyPrefix);
    }

}
