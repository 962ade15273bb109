package io.github.distlock.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.distlock.LockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.redis.RedisLockBackend;
import io.github.distlock.redis.RedisReleaseSubscriber;
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
    final LockWaiters waiters = new LockWaiters();
    final RedisReleaseSubscriber subscriber;
    final DefaultLockService service;
    final List<String> lostLeases = new CopyOnWriteArrayList<>();

    LockServiceConnection(RedisTestServer server, Duration operationTimeout, boolean watchdogByDefault) {
        this(server, operationTimeout, watchdogByDefault, backend -> backend);
    }

    /**
     * @param decorator wraps the real backend, for tests that count what reaches Redis
     */
    LockServiceConnection(RedisTestServer server, Duration operationTimeout, boolean watchdogByDefault,
            UnaryOperator<LockBackend> decorator) {
        this(server.host(), server.port(), operationTimeout, watchdogByDefault, decorator);
    }

    /**
     * Connects to any address, for example a fault proxy in front of the test Redis.
     *
     * @param decorator wraps the real backend, for tests that count what reaches Redis
     */
    LockServiceConnection(String host, int port, Duration operationTimeout, boolean watchdogByDefault,
            UnaryOperator<LockBackend> decorator) {
        connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port),
                LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(60)).build());
        connectionFactory.afterPropertiesSet();
        connectionFactory.start();
        backend = new RedisLockBackend(connectionFactory, operationTimeout, RedisLockBackend.releaseChannel("lock:"));
        LockBackend used = decorator.apply(backend);
        watchdog = new LeaseWatchdog(used, 1.0 / 3, (handle, reason) -> lostLeases.add(handle.key() + ": " + reason));
        subscriber = new RedisReleaseSubscriber(connectionFactory, RedisLockBackend.releaseChannel("lock:"), waiters);
        service = new DefaultLockService(used, watchdog, new LockDefaults("lock:", Duration.ofSeconds(30),
                Duration.ofSeconds(3), watchdogByDefault), waiters);
    }

    LockServiceConnection(RedisTestServer server) {
        this(server, Duration.ofSeconds(2), true);
    }

    @Override
    public void close() throws Exception {
        service.close();
        watchdog.close();
        subscriber.close();
        backend.close();
        connectionFactory.destroy();
    }
}
