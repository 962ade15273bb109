package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.RedisClusterPubSubAdapter;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.codec.ByteArrayCodec;

/**
 * The JVM's sharded subscription in a Redis Cluster 7+: one {@code SSUBSCRIBE} per hash
 * slot that a thread of this JVM has waited on, each to the shard channel of that slot
 * ({@link ShardedHandOverChannels}) on the master that owns it. Lettuce routes each
 * {@code SSUBSCRIBE} to the slot's owner (following {@code MOVED}) and keeps one pub/sub
 * connection per node it needs.
 *
 * <p>
 * Subscriptions are kept, not reference-counted: the first wait on a slot costs one round
 * trip, later waits none, and there are at most 16384 of them, each on one node only. A
 * wake-up for a key is trusted only once its slot's {@code SSUBSCRIBE} was confirmed;
 * until then waiters poll.
 *
 * <p>
 * When a slot moves to another master (resharding, failover), Redis ends its shard
 * channels' subscriptions with an unsolicited {@code SUNSUBSCRIBE}, and Lettuce (6.6)
 * does not subscribe again. So this class does: the slot counts as unconfirmed, waiters
 * on it poll, and a new {@code SSUBSCRIBE} goes to the new owner. One that fails is
 * retried by the next waiter's attempt.
 */
final class ShardedHandOverSubscriber implements AutoCloseable {

    /**
     * Under its name from before the rename, so that {@code logging.level} settings for
     * it keep working.
     */
    private static final Log logger = LogFactory.getLog("io.github.distlock.redis.ShardedReleaseSubscriber");

    private static final int UNSUBSCRIBED = 0;

    private static final int SUBSCRIBING = 1;

    private static final int CONFIRMED = 2;

    private final Supplier<RedisClusterClient> client;

    private final ShardedHandOverChannels channels;

    private final LockWaiters waiters;

    private final AtomicIntegerArray slots = new AtomicIntegerArray(ShardedHandOverChannels.SLOTS);

    /**
     * The pub/sub connection, opened by the first wait; {@code null} until then or after
     * a failure.
     */
    private final AtomicReference<CompletableFuture<StatefulRedisClusterPubSubConnection<byte[], byte[]>>> connection;

    private volatile boolean closed;

    /**
     * Whether the last failure was logged at WARN already: an outage warns once, not per
     * slot and wait.
     */
    private volatile boolean failureWarned;

    ShardedHandOverSubscriber(Supplier<RedisClusterClient> client, ShardedHandOverChannels channels,
            LockWaiters waiters) {
        this.client = client;
        this.channels = channels;
        this.waiters = waiters;
        this.connection = new AtomicReference<>();
    }

    /**
     * Subscribes to the channel of {@code key}'s slot if nobody has, and says whether
     * hand-overs of that slot arrive now.
     */
    boolean startListening(LockKey key) {
        int slot = ShardedHandOverChannels.slotOf(key);
        if (slots.get(slot) == CONFIRMED) {
            return true;
        }
        subscribe(slot);
        return false;
    }

    /**
     * Whether the subscription of {@code key}'s slot is confirmed, without starting
     * anything.
     */
    boolean isListening(LockKey key) {
        return slots.get(ShardedHandOverChannels.slotOf(key)) == CONFIRMED;
    }

    /** How many slots are subscribed and confirmed now. */
    int confirmedSlots() {
        int count = 0;
        for (int slot = 0; slot < ShardedHandOverChannels.SLOTS; slot++) {
            count += slots.get(slot) == CONFIRMED ? 1 : 0;
        }
        return count;
    }

    private void subscribe(int slot) {
        if (closed || !slots.compareAndSet(slot, UNSUBSCRIBED, SUBSCRIBING)) {
            return;
        }
        byte[] channel = channels.channelOf(slot).getBytes(StandardCharsets.UTF_8);
        connection().thenCompose(open -> open.async().ssubscribe(channel).toCompletableFuture())
            .whenComplete((ignored, failure) -> {
                if (failure == null) {
                    // The reply to SSUBSCRIBE: from now on the owner forwards the slot's
                    // messages.
                    slots.compareAndSet(slot, SUBSCRIBING, CONFIRMED);
                    failureWarned = false;
                    return;
                }
                slots.compareAndSet(slot, SUBSCRIBING, UNSUBSCRIBED);
                String message = "Could not subscribe to sharded lock release channel '" + channels.channelOf(slot)
                        + "'; waiters on its slot poll until a later wait subscribes: " + failure.getMessage();
                if (failureWarned) {
                    logger.debug(message);
                }
                else {
                    failureWarned = true;
                    logger.warn(message);
                }
            });
    }

    /**
     * The pub/sub connection; opened on a thread of its own, as Lettuce's connect blocks.
     */
    private CompletableFuture<StatefulRedisClusterPubSubConnection<byte[], byte[]>> connection() {
        CompletableFuture<StatefulRedisClusterPubSubConnection<byte[], byte[]>> current = connection.get();
        if (current != null) {
            return current;
        }
        CompletableFuture<StatefulRedisClusterPubSubConnection<byte[], byte[]>> next = new CompletableFuture<>();
        if (!connection.compareAndSet(null, next)) {
            return connection.get();
        }
        Thread connector = new Thread(() -> {
            try {
                StatefulRedisClusterPubSubConnection<byte[], byte[]> open = client.get()
                    .connectPubSub(ByteArrayCodec.INSTANCE);
                open.addListener(new Listener());
                if (closed) {
                    open.closeAsync();
                }
                next.complete(open);
            }
            catch (RuntimeException ex) {
                // The next wait connects again.
                connection.compareAndSet(next, null);
                next.completeExceptionally(ex);
            }
        }, "distributed-lock-subscribe");
        connector.setDaemon(true);
        connector.start();
        return next;
    }

    /**
     * After {@link #close}: subscribes again from scratch, on the first wait per slot.
     */
    void reopen() {
        if (!closed) {
            return;
        }
        connection.set(null);
        for (int slot = 0; slot < ShardedHandOverChannels.SLOTS; slot++) {
            slots.set(slot, UNSUBSCRIBED);
        }
        closed = false;
    }

    /**
     * Closes the pub/sub connection, waiting at most {@code timeout}; the client is not
     * ours.
     */
    void close(Duration timeout) {
        closed = true;
        CompletableFuture<StatefulRedisClusterPubSubConnection<byte[], byte[]>> current = connection.get();
        if (current == null) {
            return;
        }
        try {
            current.thenCompose(open -> open.closeAsync()).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (Exception ex) {
            logger.warn("Could not close the sharded lock release subscription within " + timeout
                    + "; going on, its connections close with the connection factory: " + ex.getMessage());
        }
    }

    @Override
    public void close() {
        close(HandOverSubscriber.STOP_TIMEOUT);
    }

    /**
     * Messages and subscription changes, on the client's I/O threads: no blocking here.
     */
    private final class Listener extends RedisClusterPubSubAdapter<byte[], byte[]> {

        @Override
        public void smessage(RedisClusterNode node, byte[] channel, byte[] message) {
            HandOverMessages.deliver(new String(channel, StandardCharsets.UTF_8), message, waiters);
        }

        @Override
        public void ssubscribed(RedisClusterNode node, byte[] channel, long count) {
            // Also after Lettuce re-subscribed on a reconnect.
            int slot = channels.slotOfChannel(new String(channel, StandardCharsets.UTF_8));
            if (slot >= 0) {
                slots.compareAndSet(slot, SUBSCRIBING, CONFIRMED);
            }
        }

        /**
         * We never unsubscribe while open: this is Redis telling us that the slot left
         * that node. Waiters poll until the slot's new owner confirms a new subscription.
         */
        @Override
        public void sunsubscribed(RedisClusterNode node, byte[] channel, long count) {
            int slot = channels.slotOfChannel(new String(channel, StandardCharsets.UTF_8));
            if (slot < 0 || closed) {
                return;
            }
            slots.set(slot, UNSUBSCRIBED);
            if (logger.isDebugEnabled()) {
                logger.debug("Slot " + slot + " left " + (node == null ? "its node" : node.getUri())
                        + "; subscribing to its lock release channel again");
            }
            subscribe(slot);
        }

    }

}
