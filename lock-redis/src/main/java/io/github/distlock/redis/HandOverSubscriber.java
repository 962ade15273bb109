package io.github.distlock.redis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

import io.github.distlock.core.HandOverNotifications;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;

/**
 * The one pub/sub subscription of this JVM: it receives every hand-over of a lock to a
 * waiter ({@code <waiter id>:<fencing token>:<proof>}, published by release.lua) and
 * passes it to {@link LockWaiters}, which wakes that waiter if it is one of ours, the
 * proof holds and the hand-over is newer than what the waiter has seen. A message is a
 * hint, never proof of ownership by itself: anyone allowed to {@code PUBLISH} can send
 * one.
 *
 * <p>
 * Why one channel for all keys rather than one per key: a per-key subscription costs a
 * SUBSCRIBE/UNSUBSCRIBE round trip on every wait and must be reference-counted to not
 * leak (Redisson's leak reports). One channel costs nothing per wait. Its drawback, every
 * instance receiving every hand-over, is bounded: a release publishes only when it hands
 * the lock over, so uncontended locks publish nothing, and a receiver that has no waiter
 * with that token drops the message after one map lookup.
 *
 * <p>
 * The subscription starts on the first wait, not at startup, so an application that never
 * waits holds no extra connection; until it is confirmed, waiters poll with a short
 * backoff. Spring Data's {@link RedisMessageListenerContainer} re-subscribes after a
 * reconnect.
 *
 * <p>
 * Stopping never waits more than {@link #STOP_TIMEOUT} for Redis: a subscription that is
 * still connecting to an unresponsive server holds the container's lock until the
 * client's command timeout (a minute by default), and the container's stop waits for that
 * lock.
 */
public sealed class HandOverSubscriber implements MessageListener, HandOverNotifications, SmartLifecycle, AutoCloseable
        permits RedisReleaseSubscriber {

    /**
     * Under its name from before the rename, so that {@code logging.level} settings for
     * it keep working.
     */
    private static final Log logger = LogFactory.getLog("io.github.distlock.redis.RedisReleaseSubscriber");

    /**
     * How long stopping or closing waits for the container. Unsubscribing from a healthy
     * Redis takes milliseconds; past this, shutdown goes on, and the subscription's
     * connection goes with the connection factory, which stops after us.
     */
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(2);

    private final RedisMessageListenerContainer container = new RedisMessageListenerContainer();

    private final LockWaiters waiters;

    private final String channel;

    private final AtomicBoolean started = new AtomicBoolean();

    private volatile boolean closed;

    private volatile boolean initialized;

    /**
     * The hand-over channel of locks stored under {@code keyPrefix}, for example
     * {@code lock:released} (the wire format's name): where release.lua publishes a
     * hand-over, whichever backend ran it.
     */
    public static String handOverChannel(String keyPrefix) {
        return keyPrefix + "released";
    }

    /**
     * @param connectionFactory where to subscribe, with any driver; the subscription gets
     * its own connection
     * @param channel the channel releases publish on ({@link #handOverChannel(String)})
     * @param waiters the local waiters to wake
     */
    public HandOverSubscriber(RedisConnectionFactory connectionFactory, String channel, LockWaiters waiters) {
        this.waiters = waiters;
        this.channel = channel;
        container.setConnectionFactory(connectionFactory);
        // Deliver on the client's I/O thread: waking a waiter is a map lookup and an
        // unpark, and the
        // default executor would start a thread per message.
        container.setTaskExecutor(Runnable::run);
        // A blocking client (Jedis) spends the whole subscription inside SUBSCRIBE on the
        // thread
        // that runs it: that must be a thread of its own, or the container's start never
        // returns and
        // waiters poll for ever. Lettuce subscribes asynchronously and never uses it.
        SimpleAsyncTaskExecutor subscriptionThreads = new SimpleAsyncTaskExecutor("distributed-lock-subscription-");
        subscriptionThreads.setDaemon(true);
        container.setSubscriptionExecutor(subscriptionThreads);
        container.setBeanName("distributed-lock-release-subscriber");
        container.addMessageListener(this, new ChannelTopic(channel));
        waiters.notificationsFrom(this);
    }

    /**
     * Starts the subscription in the background on the first call, and says whether
     * release messages arrive now.
     */
    public boolean startListening() {
        if (!started.get() && !closed && started.compareAndSet(false, true)) {
            Thread starter = new Thread(this::subscribe, "distributed-lock-subscribe");
            starter.setDaemon(true);
            starter.start();
            return false;
        }
        return container.isListening();
    }

    /** Whether hand-over messages arrive now, without starting anything. */
    public boolean isListening() {
        return container.isListening();
    }

    /** One channel carries every key's hand-overs: {@link #startListening()}. */
    @Override
    public boolean startDelivery(LockKey key) {
        return startListening();
    }

    /** One channel carries every key's hand-overs: {@link #isListening()}. */
    @Override
    public boolean isDelivering(LockKey key) {
        return isListening();
    }

    private void subscribe() {
        // A context that is closing must not start a subscription on a client being shut
        // down.
        if (closed) {
            return;
        }
        try {
            if (!initialized) {
                container.afterPropertiesSet();
                initialized = true;
            }
            container.start();
            logger.debug("Subscribed to lock release channel '" + channel + "'");
        }
        catch (RuntimeException ex) {
            // Waiters keep polling; the next wait does not retry, the container's
            // recovery does.
            logger.warn("Could not subscribe to lock release channel '" + channel + "'; waiters will poll", ex);
        }
    }

    /** Nothing to do: the subscription starts on the first wait. */
    @Override
    public void start() {
        closed = false;
    }

    /**
     * Unsubscribes while the connection factory is still running: in a closing context,
     * lifecycle beans stop before any bean is destroyed, and the factory stops after us
     * (our phase is later).
     */
    @Override
    public void stop() {
        closed = true;
        if (started.compareAndSet(true, false)) {
            bounded("unsubscribe", container::stop);
        }
    }

    @Override
    public boolean isRunning() {
        return !closed;
    }

    /**
     * The same phase as Spring Data's listener containers: stopped before the connection
     * factory.
     */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }

    @Override
    public void onMessage(Message message, byte[] pattern) {
        HandOverMessages.deliver(channel, message.getBody(), waiters);
    }

    @Override
    public void close() throws Exception {
        if (initialized) {
            closed = true;
            started.set(false);
            // The container's destroy stops it first: one bounded wait, not one for stop
            // and one more here.
            bounded("close the subscription", container::destroy);
        }
        else {
            stop();
        }
    }

    /**
     * Runs {@code action} on a daemon thread and waits at most {@link #STOP_TIMEOUT} for
     * it: a closing application must not hang on an unresponsive Redis.
     */
    private void bounded(String what, ContainerAction action) {
        Thread worker = new Thread(() -> {
            try {
                action.run();
            }
            catch (Exception ex) {
                logger.warn("Could not " + what + " on lock release channel '" + channel + "'", ex);
            }
        }, "distributed-lock-unsubscribe");
        worker.setDaemon(true);
        worker.start();
        try {
            worker.join(STOP_TIMEOUT.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        if (worker.isAlive()) {
            logger.warn("Could not " + what + " on lock release channel '" + channel + "' within " + STOP_TIMEOUT
                    + ": Redis does not answer. Going on; the subscription's connection closes with the "
                    + "connection factory.");
        }
    }

    @FunctionalInterface
    private interface ContainerAction {

        void run() throws Exception;

    }

}
