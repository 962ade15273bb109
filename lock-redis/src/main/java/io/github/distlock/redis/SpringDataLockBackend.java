package io.github.distlock.redis;

import java.time.Duration;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.distlock.core.LockBackend;

/**
 * Locks in one Redis deployment (standalone, Sentinel or Cluster) reached through any
 * Spring Data Redis {@link RedisConnectionFactory}, Jedis in particular: every command
 * goes through {@link StringRedisTemplate}, so one code path serves single nodes and
 * Clusters alike. {@link LettuceLockBackend} is the same lock on Lettuce's native path.
 * Both are one protocol (the same commands, scripts, keys and arguments, and the same
 * reading of every answer) over two transports, so instances on either backend share
 * locks, queues, fencing counters and the release channel, and behave alike.
 *
 * <pre>{@code
 * SpringDataLockBackend backend = new SpringDataLockBackend(jedisConnectionFactory, Duration.ofSeconds(2),
 *         "lock:", "lock:released");
 * }</pre>
 *
 * <p>
 * A free lock is taken with a bare {@code SET NX PX GET}; on Redis 6.2, which refuses
 * {@code NX} with {@code GET}, {@code acquire.lua} does it instead. {@code GET} makes the
 * command safe to run twice.
 *
 * <p>
 * <b>Bounded and not interruptible.</b> Jedis calls block, for the client's own socket
 * timeout and, with a pool, for as long as the pool makes a borrower wait. So commands
 * run on a small executor of our own and the caller waits for each at most the operation
 * timeout, through interrupts (the flag is restored afterwards). A command still queued
 * when its caller gave up is never sent, and neither is one whose thread gets its
 * connection too late; one already sent may still run, and then the caller undoes it, as
 * {@link LockBackend} prescribes. An undo ({@link #release}, {@link #stopWaiting}) of a
 * token whose acquire timed out under way first waits until that acquire has ended, so
 * that it cannot overtake it on another pooled connection.
 *
 * <p>
 * <b>A lost reply.</b> A command whose connection broke before its reply came is sent
 * once more on another connection, within the operation timeout, as Lettuce re-sends one
 * after a reconnect; a release whose re-send finds the lock no longer ours released it
 * with its first delivery, and reports {@code true}, on both backends. Jedis's Cluster
 * client also retries after a connection error, inside the client, where a re-send cannot
 * be seen: there such a release reports {@code false}.
 *
 * <p>
 * Renewals are grouped like the Lettuce backend's (one script call per slot in a Cluster,
 * up to 1,000 keys each); the calls of each Cluster master run in lanes of their own,
 * side by side, and each outcome is reported as its call answers. On a Jedis Cluster a
 * master's calls go to it as one pipeline.
 */
public final class SpringDataLockBackend extends RedisProtocolBackend {

    private final SpringDataTransport transport;

    /**
     * @param connectionFactory Spring Data Redis's connection factory, with any driver
     * @param operationTimeout upper bound on each lock command
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param handOverChannel where a release publishes that it handed the lock over to a
     * waiter ({@link HandOverSubscriber#handOverChannel(String)})
     */
    public SpringDataLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout, String keyPrefix,
            String handOverChannel) {
        this(connectionFactory, operationTimeout, keyPrefix, handOverChannel, ReplicaAcks.NONE);
    }

    /**
     * @param connectionFactory Spring Data Redis's connection factory, with any driver
     * @param operationTimeout upper bound on each lock command
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param handOverChannel where a release publishes that it handed the lock over to a
     * waiter ({@link HandOverSubscriber#handOverChannel(String)})
     * @param replicaAcks how many replicas must confirm each lock write
     * ({@code renew.lua} and {@code WAIT} on one borrowed connection)
     * @throws IllegalStateException if replica acks are asked for on a Redis Cluster
     * connection factory
     */
    public SpringDataLockBackend(RedisConnectionFactory connectionFactory, Duration operationTimeout, String keyPrefix,
            String handOverChannel, ReplicaAcks replicaAcks) {
        this(new SpringDataTransport(connectionFactory, operationTimeout, replicaAcks), keyPrefix, handOverChannel,
                replicaAcks, DeploymentName.of(connectionFactory));
    }

    private SpringDataLockBackend(SpringDataTransport transport, String keyPrefix, String handOverChannel,
            ReplicaAcks replicaAcks, String name) {
        super(new RedisLockProtocol(transport, HandOverChannel.forEveryKey(handOverChannel), replicaAcks, null),
                keyPrefix, name);
        this.transport = transport;
    }

    /**
     * Stops taking commands and waits up to the operation timeout for those under way;
     * the connections belong to the connection factory.
     */
    @Override
    public void close() {
        transport.close();
    }

}
