package io.github.distlock.core;

import io.github.distlock.LockKeys;

/**
 * A lock's two names: the one the application uses and the key the store keeps it under. The
 * backend makes the second from the first ({@link LockBackend#lockKey}); for Redis it is
 * {@code <prefix>{<name>}} (see {@link io.github.distlock.redis.RedisKeyNaming}).
 *
 * @param name the key as the caller gave it, for example {@code order:42}
 * @param redisKey the stored key, for example {@code lock:{order:42}}
 */
public record LockKey(String name, String redisKey) {

    /** The name for log lines and messages: quoted, with control characters escaped. */
    public String printableName() {
        return LockKeys.printable(name);
    }

    /** The stored key for log lines and messages: quoted, with control characters escaped. */
    public String printableRedisKey() {
        return LockKeys.printable(redisKey);
    }
}
