package io.github.distlock.core;

/**
 * A lock's two names: the one the application uses and the Redis key that stores it.
 *
 * @param name the key as the caller gave it, for example {@code order:42}
 * @param redisKey the stored key, {@code <prefix>{<name>}}, for example {@code lock:{order:42}}
 */
public record LockKey(String name, String redisKey) {

    /**
     * Builds the stored key. The braces form a Redis Cluster hash tag, so companion keys such as
     * the fencing counter land in the same slot and one script can touch both.
     */
    public static LockKey of(String prefix, String name) {
        return new LockKey(name, prefix + '{' + name + '}');
    }
}
