package io.github.distlock.core;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A {@link LockBackend} that can say, read-only, what the store holds for a lock and
 * whether the store answers at all: what the Actuator's {@code locks} endpoint and health
 * contributor show.
 *
 * <p>
 * Neither operation reads or returns the holder's token. That token is a capability
 * (whoever knows it can release the lock), so a view of the store tells whether the lock
 * is held and for how long, never by which token.
 *
 * <pre>{@code
 * if (backend instanceof InspectableLockBackend inspectable) {
 *     LockState state = inspectable.inspect(backend.lockKey("order:42"));
 *     boolean free = !state.held();
 *     boolean up = inspectable.ping().reachable();
 * }
 * }</pre>
 */
public interface InspectableLockBackend extends LockBackend {

    /**
     * Reads the state of one lock: held or free, its remaining lease, its wait queue and
     * its fencing counter. Bounded like every call, by the backend's operation timeout.
     * @param key the lock
     * @return what the store holds for it now
     * @throws io.github.distlock.LockBackendException if the store cannot be asked
     */
    LockState inspect(LockKey key);

    /**
     * Asks each store whether it answers, within the backend's operation (or node)
     * timeout, and how long it took. Never throws for an unreachable store: that is the
     * answer.
     * @return one entry per store, and how many must answer for locks to work
     */
    Reachability ping();

    /**
     * What the store holds for one lock.
     *
     * <pre>{@code
     * LockState state = inspectable.inspect(key);
     * if (state.held() && state.leaseLeftMillis() != LockState.NO_EXPIRY) {
     *     Duration left = Duration.ofMillis(state.leaseLeftMillis());
     * }
     * }</pre>
     *
     * @param held whether the lock is held (for a backend over several stores: on a
     * majority)
     * @param leaseLeftMillis if held, the milliseconds left on its lease, or
     * {@link #NO_EXPIRY} for a lock that never expires (a key a foreign client set
     * without one); 0 if free. Over several stores: the lease that a majority still has.
     * @param queueLength entries in the lock's wait queue; a waiter that vanished may
     * count until its entry expires (within seconds)
     * @param lastFencingToken the last fencing token issued for the lock, or 0 if none is
     * known (a store may forget it while the lock is free: the Redis counter lives a day)
     * @param nodes for a backend over several stores, each store's own state; otherwise
     * empty
     */
    record LockState(boolean held, long leaseLeftMillis, long queueLength, long lastFencingToken,
            List<NodeLockState> nodes) {

        /** The {@link #leaseLeftMillis} of a lock held without an expiry. */
        public static final long NO_EXPIRY = -1;

        public LockState {
            nodes = List.copyOf(nodes);
        }

        /** A free lock in a single store. */
        public static LockState free(long queueLength, long lastFencingToken) {
            return new LockState(false, 0, queueLength, lastFencingToken, List.of());
        }

        /**
         * A lock held in a single store, with {@code leaseLeftMillis} left or
         * {@link #NO_EXPIRY}.
         */
        public static LockState held(long leaseLeftMillis, long queueLength, long lastFencingToken) {
            return new LockState(true, leaseLeftMillis, queueLength, lastFencingToken, List.of());
        }
    }

    /**
     * One store's state of a lock, for a backend over several stores.
     *
     * @param node the store's name, without credentials
     * @param state what it holds, or {@code null} if it did not answer
     * @param error why it did not answer, or {@code null}
     */
    record NodeLockState(String node, @Nullable LockState state, @Nullable String error) {
    }

    /**
     * Whether the stores answer.
     *
     * @param nodes each store's answer
     * @param quorum how many stores must answer for locks to work: 1 for a single store,
     * every master of a Redis Cluster (each holds a share of the locks), a majority for
     * Redlock
     */
    record Reachability(List<NodeReachability> nodes, int quorum) {

        public Reachability {
            nodes = List.copyOf(nodes);
        }

        /** A single store's answer. */
        public static Reachability single(NodeReachability node) {
            return new Reachability(List.of(node), 1);
        }

        /** How many stores answered (and, over several stores, count). */
        public int reachableNodes() {
            int reachable = 0;
            for (NodeReachability node : nodes) {
                if (node.reachable()) {
                    reachable++;
                }
            }
            return reachable;
        }

        /** Whether enough stores answered for locks to work. */
        public boolean reachable() {
            return reachableNodes() >= quorum;
        }
    }

    /**
     * One store's answer to a ping.
     *
     * @param node the store's name, without credentials: its {@code host:port} for a
     * Redis node or Cluster master
     * @param reachable whether it answered in time (and, over several stores, its answers
     * count)
     * @param latency how long the ping took; for an unreachable store, how long it was
     * waited for
     * @param error why it is not reachable, in plain words (with the server's own reply,
     * such as {@code WRONGPASS ...}, and the setting to check), or {@code null}
     */
    record NodeReachability(String node, boolean reachable, Duration latency, @Nullable String error) {

        public NodeReachability {
            Objects.requireNonNull(node, "node");
            Objects.requireNonNull(latency, "latency");
        }
    }

}
