package io.github.distlock.core;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.LockBackend.LeaseRenewal;
import io.github.distlock.redis.RedisKeyNaming;
import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisTestServer;

/**
 * Two application instances on one test Redis: {@link #proxied} reaches it through a
 * {@link RedisFaultProxy} (its lock commands, renewals and release subscription all go
 * through the proxy), {@link #direct} connects straight to it. Faults hit the proxied
 * instance; the direct one contends with it and watches Redis.
 */
final class ProxiedLockServices implements AutoCloseable {

    static final String PREFIX = "lock:";

    final RedisTestServer redis;

    final RedisFaultProxy proxy;

    final LockServiceConnection proxied;

    final LockServiceConnection direct;

    final Duration operationTimeout;

    private ProxiedLockServices(RedisTestServer redis, Duration operationTimeout) {
        this.redis = redis;
        this.operationTimeout = operationTimeout;
        this.proxy = RedisFaultProxy.start(redis);
        this.proxied = new LockServiceConnection(proxy.host(), proxy.port(), operationTimeout, true,
                backend -> backend);
        this.direct = new LockServiceConnection(redis, operationTimeout, true);
    }

    /**
     * Starts both instances, connected and subscribed, with every lock script cached in
     * Redis.
     */
    static ProxiedLockServices start(RedisTestServer redis, Duration operationTimeout) {
        ProxiedLockServices services = new ProxiedLockServices(redis, operationTimeout);
        services.warmUp();
        return services;
    }

    /**
     * Runs every lock script once, so that no EVALSHA of a test falls back to EVAL (a
     * second command, which would change what a fault on "the next matching command"
     * hits), and starts both release subscriptions.
     */
    private void warmUp() {
        Duration ttl = Duration.ofSeconds(5);
        // The first connect of a cold JVM can take longer than a short operation timeout.
        for (LockServiceConnection instance : List.of(proxied, direct)) {
            await().atMost(Duration.ofSeconds(10))
                .ignoreException(LockBackendException.class)
                .until(() -> instance.service.tryLock("connect", ttl, Duration.ZERO)
                    .map(LockHandle::release)
                    .orElse(false));
        }
        LockHandle held = proxied.service
            .lock(LockRequest.of("warm-up").withTtl(ttl).withWaitTime(Duration.ZERO).withWatchdog(false));
        held.fencingToken();
        // A waiter that gives up runs acquire.lua (queued) and cancel.lua.
        Optional<LockHandle> none = direct.service
            .tryLock(LockRequest.of("warm-up").withTtl(ttl).withWaitTime(Duration.ofMillis(100)));
        if (none.isPresent()) {
            throw new IllegalStateException("warm-up: the lock was taken twice");
        }
        proxied.backend.renew(
                List.of(new LeaseRenewal(RedisKeyNaming.lockKey(PREFIX, "warm-up"), "not-the-token", 1_000)),
                (index, outcome) -> {
                });
        held.release();
        for (LockServiceConnection instance : List.of(proxied, direct)) {
            await().atMost(Duration.ofSeconds(10)).until(instance.subscriber::startListening);
        }
    }

    /** The Redis key of lock {@code name}. */
    static String redisKey(String name) {
        return RedisKeyNaming.lockKey(PREFIX, name).storeKey();
    }

    /**
     * The value of the lock key in Redis now (a holder's token), or null; read directly,
     * not through the proxy.
     */
    String lockValue(String redisKey) {
        return (String) redis.command("GET", redisKey);
    }

    /** How many waiters are queued for the lock in Redis. */
    long queueLength(String redisKey) {
        return (Long) redis.command("ZCARD", redisKey + LettuceLockBackend.QUEUE_SUFFIX);
    }

    /** How many waiter entries the lock has in Redis. */
    long waiterEntries(String redisKey) {
        return (Long) redis.command("HLEN", redisKey + LettuceLockBackend.WAITING_SUFFIX);
    }

    /** Ends every fault: the proxy's rules and outages, and a paused Redis. */
    void heal() {
        if (redis.isPaused()) {
            redis.resume();
        }
        proxy.heal();
    }

    @Override
    public void close() throws Exception {
        heal();
        proxied.close();
        direct.close();
        proxy.close();
    }

}
