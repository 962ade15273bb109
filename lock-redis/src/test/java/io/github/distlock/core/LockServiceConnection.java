package io.github.distlock.core;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.distlock.LockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.redis.HandOverSubscriber;
import io.github.distlock.redis.HandOverChannel;
import io.github.distlock.redis.ReplicaAcks;
import io.github.distlock.redis.SpringDataLockBackend;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * A {@link LockService} wired by hand to a test Redis, with its own connection, as a
 * separate application instance would have. The client's own command timeout is a minute
 * (Lettuce's default); only the lock's operation timeout may bound commands.
 */
final class LockServiceConnection implements AutoCloseable {

    /** The client under the lock service, and the backend that goes with it. */
    enum Driver {

        /** {@link LettuceConnectionFactory} and the native {@link LettuceLockBackend}. */
        LETTUCE,
        /** {@link JedisConnectionFactory} (pooled) and {@link SpringDataLockBackend}. */
        JEDIS

    }

    final RedisConnectionFactory connectionFactory;

    final LockBackend backend;

    final LeaseWatchdog watchdog;

    final LockWaiters waiters = new LockWaiters();

    final HandOverSubscriber subscriber;

    final DefaultLockService service;

    final List<String> lostLeases = new CopyOnWriteArrayList<>();

    /** Everything the lock service told its listeners, in order. */
    final RecordingLockListener events = new RecordingLockListener(lostLeases);

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
     * @param decorator wraps the real backend, for tests that count what reaches Redis
     */
    LockServiceConnection(String host, int port, Duration operationTimeout, boolean watchdogByDefault,
            UnaryOperator<LockBackend> decorator) {
        this(Driver.LETTUCE, host, port, operationTimeout, watchdogByDefault, decorator);
    }

    /**
     * Connects with the given driver.
     * @param decorator wraps the real backend, for tests that count what reaches Redis
     */
    LockServiceConnection(Driver driver, String host, int port, Duration operationTimeout, boolean watchdogByDefault,
            UnaryOperator<LockBackend> decorator) {
        this(driver, host, port, operationTimeout, watchdogByDefault, decorator, ReplicaAcks.NONE);
    }

    /**
     * Connects with the given driver, confirming lock writes with {@code WAIT} as
     * {@code replicaAcks} says.
     * @param decorator wraps the real backend, for tests that count what reaches Redis
     */
    LockServiceConnection(Driver driver, String host, int port, Duration operationTimeout, boolean watchdogByDefault,
            UnaryOperator<LockBackend> decorator, ReplicaAcks replicaAcks) {
        String channel = HandOverSubscriber.handOverChannel("lock:");
        if (driver == Driver.JEDIS) {
            JedisConnectionFactory jedis = new JedisConnectionFactory(new RedisStandaloneConfiguration(host, port),
                    JedisClientConfiguration.builder().readTimeout(Duration.ofSeconds(60)).usePooling().build());
            jedis.afterPropertiesSet();
            jedis.start();
            connectionFactory = jedis;
            backend = new SpringDataLockBackend(jedis, operationTimeout, "lock:", channel, replicaAcks);
        }
        else {
            LettuceConnectionFactory lettuce = new LettuceConnectionFactory(
                    new RedisStandaloneConfiguration(host, port),
                    LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(60)).build());
            lettuce.afterPropertiesSet();
            lettuce.start();
            connectionFactory = lettuce;
            backend = new LettuceLockBackend(lettuce, operationTimeout, "lock:", HandOverChannel.forEveryKey(channel),
                    replicaAcks);
        }
        LockBackend used = decorator.apply(backend);
        watchdog = new LeaseWatchdog(used, 1.0 / 3);
        subscriber = new HandOverSubscriber(connectionFactory, channel, waiters);
        service = new DefaultLockService(used, watchdog,
                new LockDefaults(Duration.ofSeconds(30), Duration.ofSeconds(3), watchdogByDefault), waiters,
                LockListeners.of(List.of(events)));
    }

    /**
     * Connected to a running {@code server} before it returns; see
     * {@link #awaitConnected()}.
     */
    LockServiceConnection(RedisTestServer server) {
        this(server, Duration.ofSeconds(2), true);
        awaitConnected();
    }

    /**
     * Connected to a running {@code server} before it returns; see
     * {@link #awaitConnected()}.
     */
    LockServiceConnection(Driver driver, RedisTestServer server) {
        this(driver, server.host(), server.port(), Duration.ofSeconds(2), true, backend -> backend);
        awaitConnected();
    }

    /**
     * Opens the lock's connection by PING, retrying: in a cold test JVM on a busy machine
     * the first connect can take longer than the operation timeout, and would then fail
     * the test's first lock call. A PING, not a lock, so no listener sees it and no lock
     * command is counted.
     */
    LockServiceConnection awaitConnected() {
        InspectableLockBackend inspectable = (InspectableLockBackend) backend;
        await().atMost(Duration.ofSeconds(30)).until(() -> inspectable.ping().reachable());
        return this;
    }

    @Override
    public void close() throws Exception {
        service.close();
        watchdog.close();
        subscriber.close();
        ((AutoCloseable) backend).close();
        ((DisposableBean) connectionFactory).destroy();
    }

}
