package io.github.distlock.redlock;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.distlock.LockKeys;
import io.github.distlock.core.HandOverNotifications;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.redis.LockConnection;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;

/**
 * Release hints of a Redlock: a release publishes {@code <release id>:<lock key>} on the
 * hint channel of the arbiter node (from its release script itself), or of every node
 * that deleted the lock when the arbiter did not, and this JVM's subscriptions to the
 * nodes pass each hint to {@link LockWaiters#releaseHinted}, which wakes the
 * longest-waiting thread polling for that lock.
 *
 * <p>
 * A hint is never proof that the lock is free: anyone allowed to {@code PUBLISH} can send
 * one, and the woken thread still has to win a majority. It never carries the holder's
 * token (a capability: whoever knows it can release the lock), only a random id per
 * release, so that the same release hinted by every node wakes one waiter, not one per
 * node. A hint from any node wakes; a lost one, a node that is down, an expiry or another
 * client's {@code DEL} send no hint, and the waiters' randomized retry
 * ({@code distributed-lock.redlock.retry-delay}) finds the lock then.
 *
 * <p>
 * A contender of a contended lock joins the lock's wake-up line on the arbiter node, and
 * the arbiter's release sends its hint to the instance at the head of that line alone, on
 * {@code <channel>:<waiter id>}, or to every instance if nobody is in line (see
 * redlock_release.lua). One woken instance per release, not one per instance: each woken
 * one used to ask the arbiter, and all but one asked in vain.
 *
 * <p>
 * One subscription per node for the whole JVM (both channels), opened on the first wait
 * (an application that never waits holds no extra connection) from the nodes' own
 * clients, so it shares their event loops. Lettuce re-subscribes after a reconnect; a
 * node that could not be reached is tried again on a later wait, at most once a second.
 *
 * <pre>{@code
 * LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(...);
 * RedlockBackend redlock = nodes.redlock(0.01);
 * LockWaiters waiters = new LockWaiters();
 * redlock.releaseHints().waitersRetryEvery(Duration.ofMillis(50))   // the waiters' retry delay
 *         .deliverTo(waiters);   // then new DefaultLockService(redlock, ..., waiters)
 * }</pre>
 */
public final class RedlockReleaseHints implements HandOverNotifications, AutoCloseable {

    private static final Log logger = LogFactory.getLog(RedlockReleaseHints.class);

    /**
     * How long a node whose subscription failed is left alone before a wait tries it
     * again.
     */
    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * The shortest stay in a wake-up line: enough for a woken waiter's attempt to follow
     * its last one.
     */
    private static final long MIN_LINE_ALIVE_MILLIS = 250;

    private final List<RedisClient> clients;

    private final List<RedisURI> uris;

    private final List<LockConnection> connections;

    private final List<String> names;

    private final String channel;

    /**
     * This instance's id in the nodes' wake-up lines; its hints come on
     * {@code <channel>:<waiter id>}.
     */
    private final String waiterId = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);

    /**
     * How long this instance stays in a wake-up line after its last attempt there (see
     * {@link #waitersRetryEvery}).
     */
    private volatile long lineAliveMillis = MIN_LINE_ALIVE_MILLIS;

    /**
     * Per node: its subscription, or {@code null} before the first wait and after a
     * failed attempt.
     */
    private final AtomicReferenceArray<Subscription> subscriptions;

    private volatile LockWaiters waiters;

    private volatile boolean closed;

    /**
     * Nodes whose refusal was logged at WARN; a wait tries again each second, which would
     * repeat it.
     */
    private final Set<String> refusalsLogged = ConcurrentHashMap.newKeySet();

    /**
     * One node's subscription: its connection once open, and whether the SUBSCRIBE was
     * confirmed.
     */
    private static final class Subscription {

        final long startedAt = System.nanoTime();

        volatile StatefulRedisPubSubConnection<String, String> connection;

        volatile boolean subscribed;

        volatile boolean failed;

    }

    /**
     * The hint channel of locks stored under {@code keyPrefix}, for example
     * {@code lock:redlock-released}: apart from the single-Redis release channel, whose
     * subscribers expect hand-overs only.
     */
    public static String channel(String keyPrefix) {
        return keyPrefix + "redlock-released";
    }

    RedlockReleaseHints(List<RedisClient> clients, List<RedisURI> uris, List<LockConnection> connections,
            List<String> names, String channel) {
        this.clients = List.copyOf(clients);
        this.uris = List.copyOf(uris);
        this.connections = List.copyOf(connections);
        this.names = List.copyOf(names);
        this.channel = channel;
        this.subscriptions = new AtomicReferenceArray<>(clients.size());
    }

    /**
     * How often the waiters try without being woken
     * ({@code distributed-lock.redlock.retry-delay}; 50 ms if never told): an instance
     * stays in a lock's wake-up line for two of these after its last attempt, at least
     * 250 ms. One whose attempts stopped (it gave up, or took the lock by a full vote) is
     * passed over once that is over, rather than woken in vain.
     * @return this
     */
    public RedlockReleaseHints waitersRetryEvery(Duration retryDelay) {
        lineAliveMillis = Math.max(MIN_LINE_ALIVE_MILLIS, 2 * retryDelay.toMillis());
        return this;
    }

    /** How long this instance stays in a wake-up line after its last attempt there. */
    long lineAliveMillis() {
        return lineAliveMillis;
    }

    /**
     * Wakes {@code waiters}' polling threads with the hints from now on, and tells them
     * (through {@link LockWaiters#notificationsFrom(HandOverNotifications)}) to start the
     * subscriptions on their first wait.
     * @return this
     */
    public RedlockReleaseHints deliverTo(LockWaiters waiters) {
        this.waiters = waiters;
        waiters.notificationsFrom(this);
        return this;
    }

    /**
     * Subscribes on every node not subscribed yet; says whether any node's hints arrive
     * now.
     */
    @Override
    public boolean startDelivery(LockKey key) {
        if (!closed) {
            for (int i = 0; i < subscriptions.length(); i++) {
                Subscription current = subscriptions.get(i);
                if (current == null || (current.failed && System.nanoTime() - current.startedAt > RETRY_NANOS)) {
                    Subscription next = new Subscription();
                    if (subscriptions.compareAndSet(i, current, next)) {
                        subscribe(i, next);
                    }
                }
            }
        }
        return isDelivering(key);
    }

    /**
     * Whether at least one node's hints arrive now: one node's hint is enough to wake a
     * waiter.
     */
    @Override
    public boolean isDelivering(LockKey key) {
        for (int i = 0; i < subscriptions.length(); i++) {
            if (isDelivering(i)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether node {@code i}'s hints arrive now, both those for every instance and those
     * for this one: only then may this instance join that node's wake-up lines, or a
     * release would send its hint to it and wake nobody.
     */
    boolean isDelivering(int node) {
        Subscription subscription = subscriptions.get(node);
        StatefulRedisPubSubConnection<String, String> connection = subscription == null ? null
                : subscription.connection;
        return connection != null && subscription.subscribed && connection.isOpen();
    }

    private void subscribe(int node, Subscription subscription) {
        clients.get(node).connectPubSubAsync(StringCodec.UTF8, uris.get(node)).whenComplete((connection, failure) -> {
            if (failure != null) {
                subscription.failed = true;
                logger.debug("Could not subscribe to Redlock release hints on " + names.get(node)
                        + "; waiters poll that node's releases", failure);
                return;
            }
            if (closed) {
                connection.closeAsync();
                return;
            }
            subscription.connection = connection;
            connection.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String from, String message) {
                    deliver(message);
                }
            });
            connection.async().subscribe(channel, waiterChannel()).whenComplete((ok, refused) -> {
                if (refused != null) {
                    subscription.failed = true;
                    connection.closeAsync();
                    if (refusalsLogged.add(names.get(node))) {
                        logger.warn(
                                "Redlock node " + names.get(node) + " refused the subscription to '" + channel
                                        + "' (an ACL without this channel?); waiters poll that node's releases",
                                refused);
                    }
                }
                else {
                    subscription.subscribed = true;
                }
            });
            if (closed) {
                connection.closeAsync();
            }
        });
    }

    /** {@code <release id>:<lock key>}; anything else is not ours and is ignored. */
    private void deliver(String message) {
        LockWaiters target = waiters;
        int separator = message.indexOf(':');
        if (target == null || separator <= 0) {
            if (separator <= 0 && logger.isDebugEnabled()) {
                logger.debug("Ignoring unexpected message on Redlock hint channel '" + channel + "': "
                        + LockKeys.printable(message));
            }
            return;
        }
        target.releaseHinted(message.substring(separator + 1), message.substring(0, separator));
    }

    /** The channel the hints go out on, {@code <prefix>redlock-released}. */
    String channel() {
        return channel;
    }

    /**
     * This instance's id in the nodes' wake-up lines
     * ({@link io.github.distlock.redis.LettuceLockBackend#tryAcquireOrWaitAsync}); a
     * release hinted to it comes on {@link #waiterChannel()}.
     */
    String waiterId() {
        return waiterId;
    }

    /**
     * {@code <channel>:<waiter id>}: where the hints meant for this instance alone come.
     */
    String waiterChannel() {
        return channel + ':' + waiterId;
    }

    /**
     * The hint for one release of {@code key}, {@code <release id>:<lock key>}: the same
     * text on every node that sends it, so that it wakes once, made before it is known
     * which nodes will.
     */
    String newHint(LockKey key) {
        return Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE) + ':' + key.storeKey();
    }

    /**
     * A release of {@code key} by this JVM deleted the lock on the nodes marked in
     * {@code releasedOn}: publishes {@code hint} on those of them that did not publish it
     * themselves (their release script does, see
     * {@link io.github.distlock.redis.LettuceLockBackend#releaseAndHint}), and tells this
     * JVM's waiters whether a hint will reach them.
     * @param hintedBy the nodes whose release already published the hint
     */
    void released(boolean[] releasedOn, boolean[] hintedBy, LockKey key, String hint, boolean majority) {
        boolean reachesUs = false;
        for (int i = 0; i < releasedOn.length; i++) {
            if (releasedOn[i]) {
                if (!hintedBy[i]) {
                    connections.get(i).publishReleaseHint(channel, hint);
                }
                reachesUs |= isDelivering(i);
            }
        }
        LockWaiters target = waiters;
        if (majority && target != null) {
            target.releasedHere(key, reachesUs, hint.substring(0, hint.indexOf(':')));
        }
    }

    /**
     * Publishes {@code hint} to every instance on the nodes marked in {@code on}, with a
     * command of its own.
     */
    void publish(boolean[] on, String hint) {
        for (int i = 0; i < on.length; i++) {
            if (on[i]) {
                connections.get(i).publishReleaseHint(channel, hint);
            }
        }
    }

    /**
     * Closes the subscriptions; the clients are the nodes'. Only the first call does
     * anything.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < subscriptions.length(); i++) {
            Subscription subscription = subscriptions.get(i);
            if (subscription != null && subscription.connection != null) {
                subscription.connection.closeAsync();
            }
        }
    }

}
