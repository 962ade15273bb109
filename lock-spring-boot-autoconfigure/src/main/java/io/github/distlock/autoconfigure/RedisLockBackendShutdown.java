package io.github.distlock.autoconfigure;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.Lifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.distlock.core.LockBackend;
import io.github.distlock.redis.RedisLockBackend;

/**
 * Closes the {@link RedisLockBackend}'s connection when the context is destroyed, unless the connection factory has
 * closed it already.
 *
 * <p>Why: {@code LettuceConnectionFactory} is a {@code SmartLifecycle}. A closing context stops it before it destroys
 * any bean, and stopping shuts its Lettuce client down, which closes every connection the client opened, the
 * backend's included. Closing it again from the backend's destroy method made Lettuce log
 * {@code WARN Connection is already closed} on every shutdown after a lock was used. The factory is still running at
 * this point only when it outlives this context (it belongs to a parent context) or never stopped (a failed
 * refresh); then the connection is ours to close.
 *
 * <p>Acts only on a {@link RedisLockBackend}; any other {@link LockBackend} is left to its own destroy method.
 */
public final class RedisLockBackendShutdown implements DisposableBean {

    private final LockBackend lockBackend;
    private final RedisConnectionFactory connectionFactory;

    /**
     * @param lockBackend the backend whose connection to close
     * @param connectionFactory the factory whose client opened that connection
     */
    public RedisLockBackendShutdown(LockBackend lockBackend, RedisConnectionFactory connectionFactory) {
        this.lockBackend = lockBackend;
        this.connectionFactory = connectionFactory;
    }

    /** Closes the backend's connection, unless the connection factory stopped and closed it with its client. */
    @Override
    public void destroy() {
        boolean factoryClosedIt = connectionFactory instanceof Lifecycle lifecycle && !lifecycle.isRunning();
        if (!factoryClosedIt && lockBackend instanceof RedisLockBackend redis) {
            redis.close();
        }
    }
}
