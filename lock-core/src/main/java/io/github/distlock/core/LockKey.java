package io.github.distlock.core;

import io.github.distlock.LockKeys;

/**
 * A lock's two names: the one the application uses and the key the store keeps it under.
 * The backend makes the second from the first ({@link LockBackend#lockKey}): the Redis
 * store adds its key prefix and a Cluster hash tag ({@code lock:{order:42}}), the
 * in-memory store keeps the name as it is.
 *
 * <pre>{@code
 * LockKey key = backend.lockKey("order:42");
 * log.info("holding {} stored as {}", key.printableName(), key.printableStoreKey());
 * }</pre>
 *
 * @param name the key as the caller gave it, for example {@code order:42}
 * @param storeKey the key in the store, for example {@code lock:{order:42}}
 */
public record LockKey(String name, String storeKey) {

    /** The name for log lines and messages: quoted, with control characters escaped. */
    public String printableName() {
        return LockKeys.printable(name);
    }

    /**
     * The stored key for log lines and messages: quoted, with control characters escaped.
     */
    public String printableStoreKey() {
        return LockKeys.printable(storeKey);
    }

    /**
     * The key in the store.
     * @deprecated since the store-neutral SPI, the key is not always a Redis key: use
     * {@link #storeKey()}
     */
    @Deprecated(since = "0.1.0")
    public String redisKey() {
        return storeKey;
    }
}
