package io.github.distlock.core;

import io.github.distlock.LockHandle;

/**
 * Test access to what a handle believes it owns: its token and its Redis key, so that a
 * test in another package can compare them with what Redis holds (the public API keeps
 * the token private: it is a capability).
 */
public final class HandleTokens {

    private HandleTokens() {
    }

    /**
     * The token the handle's acquisition wrote into the lock key.
     * @param handle a handle returned by the {@link DefaultLockService}
     * @return the token
     */
    public static String tokenOf(LockHandle handle) {
        return ((DefaultLockHandle) handle).token();
    }

    /**
     * The Redis key of the handle's lock, e.g. {@code lock:{order:42}}.
     * @param handle a handle returned by the {@link DefaultLockService}
     * @return the key
     */
    public static String redisKeyOf(LockHandle handle) {
        return ((DefaultLockHandle) handle).lockKey().storeKey();
    }

}
