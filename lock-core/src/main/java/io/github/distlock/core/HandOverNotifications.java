package io.github.distlock.core;

/**
 * The wake-up capability: something that delivers a {@link QueueingLockBackend}'s
 * hand-over announcements to this JVM's {@link LockWaiters} (by calling
 * {@link LockWaiters#handedOver}), and can say, per lock, whether it is delivering them
 * right now. While it is not, waiters poll; while it is, a waiter sleeps until it is
 * woken (re-checking at least once a second, as a release by another client or an expiry
 * announces nothing).
 *
 * <p>
 * The Redis backends get theirs from a pub/sub subscription ({@code HandOverSubscriber},
 * or {@code RedisHandOverNotifications} with sharded pub/sub in a Cluster 7+). A custom
 * backend that announces hand-overs itself implements this interface too, and the
 * auto-configuration connects it to the waiters:
 *
 * <pre>{@code
 * class InMemoryLockBackend implements QueueingLockBackend, HandOverNotifications {
 *     public boolean startDelivery(LockKey key) { return true; }   // always delivering
 *     public boolean isDelivering(LockKey key) { return true; }
 *     ...
 * }
 * }</pre>
 */
public interface HandOverNotifications {

    /**
     * Asked when a thread is about to wait for {@code key}: starts the delivery for it (a
     * subscription) if it is not running, and says whether it runs now; it may answer
     * {@code false} until it does.
     */
    boolean startDelivery(LockKey key);

    /**
     * Asked before every attempt of a waiting thread: whether hand-overs of {@code key}
     * are being delivered now. Must not start anything, so that locks nobody waits for
     * open no subscription.
     */
    boolean isDelivering(LockKey key);

    /**
     * Called once by whoever builds a lock service on this backend (the
     * auto-configuration does): the waiters to deliver hand-overs to, by calling
     * {@link LockWaiters#handedOver}. Several lock services may share one store, each
     * with its own waiters. A delivery that was built with its waiters (the Redis
     * subscription) ignores this.
     * @param waiters the waiters of one lock service
     */
    default void deliverHandOversTo(LockWaiters waiters) {
    }

}
