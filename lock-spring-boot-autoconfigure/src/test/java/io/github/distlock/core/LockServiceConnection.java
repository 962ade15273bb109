package io.github.distlock.core;

import java.time.Duration;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.distlock.LockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.redis.RedisLockBackend;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * A {@link LockService} wired by hand to a test Redis, with its own connection, as a separate
 * application instance would have. The client's own command timeout is a minute (Lettuce's
 * default); only the lock's operation timeout may bound commands.
 */
final class LockServiceConnection implements AutoCloseable {

    final LettuceConnectionFactory connectionFactory;
    final RedisLockBackend backend;
    final LeaseWatchdog watchdog;
    final DefaultLockService service;

    LockServiceConnection(RedisTestServer server, Duration operationTimeout, boolean watchdogByDefault) {
        connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()),
                LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(60)).build());
        connectionFactory.afterPropertiesSet();
        connectionFactory.start();
        backend = new RedisLockBackend(connectionFactory, operationTimeout);
        watchdog = new LeaseWatchdog(backend, 1.0 / 3);
        service = new DefaultLockService(backend, watchdog, new LockDefaults("lock:", Duration.ofSeconds(30),
                Duration.ofSeconds(3), watchdogByDefault));
    }

    LockServiceConnection(RedisTestServer server) {
        this(server, Duration.ofSeconds(2), true);
    }

    @Override
    public void close() {
        watchdog.close();
        connectionFactory.destroy();
    }
}
