package io.github.distlock.redis;

import java.time.Duration;
import java.util.function.Function;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.distlock.core.LockKey;

/**
 * The old name of {@link LettuceLockBackend}, kept so that code which builds one keeps
 * compiling. Every constructor builds exactly the backend {@link LettuceLockBackend}'s
 * constructor of the same arguments builds.
 *
 * <pre>{@code
 * // before
 * RedisLockBackend backend = new RedisLockBackend(factory, Duration.ofSeconds(2), "lock:", "lock:released");
 * // now
 * LettuceLockBackend backend = new LettuceLockBackend(factory, Duration.ofSeconds(2), "lock:", "lock:released");
 * }</pre>
 *
 * @deprecated the name did not say which driver it runs on: use
 * {@link LettuceLockBackend} (Lettuce) or {@link SpringDataLockBackend} (any Spring Data
 * Redis connection factory, Jedis)
 */
@Deprecated(since = "0.1.0")
public final class RedisLockBackend extends LettuceLockBackend {

    /**
     * @see LettuceLockBackend#LettuceLockBackend(RedisConnectionFactory, Duration,
     * String, String)
     */
    public RedisLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout, String keyPrefix,
            String releaseChannel) {
        super(connectionFactory, operationTimeout, keyPrefix, releaseChannel);
    }

    /**
     * @see LettuceLockBackend#LettuceLockBackend(LockConnection, String, String)
     */
    public RedisLockBackend(LockConnection connection, String keyPrefix, String releaseChannel) {
        super(connection, keyPrefix, releaseChannel);
    }

    /**
     * @see LettuceLockBackend#LettuceLockBackend(LockConnection, String, String,
     * NodeIncarnation)
     */
    public RedisLockBackend(LockConnection connection, String keyPrefix, String releaseChannel,
            NodeIncarnation incarnation) {
        super(connection, keyPrefix, releaseChannel, incarnation);
    }

    /**
     * @see LettuceLockBackend#LettuceLockBackend(RedisConnectionFactory, Duration,
     * String, Function, ReplicaAcks)
     */
    public RedisLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout, String keyPrefix,
            Function<LockKey, ? extends HandOverChannel> handOverChannels, ReplicaAcks replicaAcks) {
        super(connectionFactory, operationTimeout, keyPrefix, handOverChannels, replicaAcks);
    }

    /**
     * @see LettuceLockBackend#LettuceLockBackend(LockConnection, String, Function,
     * ReplicaAcks)
     */
    public RedisLockBackend(LockConnection connection, String keyPrefix,
            Function<LockKey, ? extends HandOverChannel> handOverChannels, ReplicaAcks replicaAcks) {
        super(connection, keyPrefix, handOverChannels, replicaAcks);
    }

    /**
     * The release channel of locks stored under {@code keyPrefix}, for example
     * {@code lock:released}.
     * @deprecated use {@link LettuceLockBackend#handOverChannel(String)}: the same
     * channel
     */
    @Deprecated(since = "0.1.0")
    public static String releaseChannel(String keyPrefix) {
        return handOverChannel(keyPrefix);
    }

}
