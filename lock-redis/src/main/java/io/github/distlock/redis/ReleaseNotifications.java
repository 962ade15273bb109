package io.github.distlock.redis;

import java.time.Duration;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.distlock.core.LockWaiters;

/**
 * The old name of {@link RedisHandOverNotifications}, kept so that code which builds one
 * keeps compiling: it makes the same choice of channels and listens the same way.
 *
 * @deprecated the signal is a hand-over to the next waiter: use
 * {@link RedisHandOverNotifications}
 */
@Deprecated(since = "0.1.0")
public final class ReleaseNotifications extends RedisHandOverNotifications {

    /**
     * @see RedisHandOverNotifications#RedisHandOverNotifications(RedisConnectionFactory,
     * String, boolean, HandOverSubscriber, LockWaiters, Duration)
     */
    public ReleaseNotifications(RedisConnectionFactory connectionFactory, String keyPrefix, boolean shardedAllowed,
            HandOverSubscriber global, LockWaiters waiters, Duration timeout) {
        super(connectionFactory, keyPrefix, shardedAllowed, global, waiters, timeout);
    }

}
