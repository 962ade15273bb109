package io.github.distlock.core;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A {@link LockBackend} that can say, read-only, what the store holds for a lock and whether the
 * store answers at all: what the Actuator's {@code locks} endpoint and health contributor show.
 *
 * <p>Neither operation reads or returns the holder's token. That token is a capability (whoever
 * knows it can release the lock), so a view of the store tells whether the lock is held and for how
 * long, never by which token.
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
     * Reads the state of one lock: held or free, its remaining lease, its wait queue and its
     * fencing counter. Bounded like every call, by the backend's operation timeout.
     *
     * @param key the lock
     * @return what the store holds for it now
     * @throws io.github.distlock.LockBackendException if the store cannot be asked
     */
    LockState inspect(LockKey key);

    /**
     * Asks each store whether it answers, within the backend's operation (or node) timeout, and
     * how long it took. Never throws for an unreachable store: that is the answer.
     *
     * @return one entry per store, and how many must answer for locks to work
     */
    Reachability ping();

    /**
     * What the store holds for one lock.
     *
     * @param held whether the lock key exists (for a backend over several stores: on a majority)
     * @param pttlMillis the key's remaining lease as Redis's {@code PTTL} reports it: the milliseconds
     *        left, {@code -1} for a key without expiry (set by a foreign client), {@code -2} for no key
     *        (free). Over several stores: the lease that a majority still has.
     * @param queueLength entries in the lock's wait queue; a waiter that vanished counts until its
     *        entry expires (within seconds)
     * @param lastFencingToken the lock's fencing counter, which is the last fencing token issued for
     *        it, or 0 if none was issued within the counter's lifetime (a day)
     * @param nodes for a backend over several stores, each store's own state; otherwise empty
     */
    record LockState(boolean held, long pttlMillis, long queueLength, long lastFencingToken, List<NodeLockState> nodes) {

        public LockState {
            nodes = List.copyOf(nodes);
        }

        /** The state of a lock in a single store. */
        public static LockState of(long pttlMillis, long queueLength, long lastFencingToken) {
            return new LockState(pttlMillis != -2, pttlMillis, queueLength, lastFencingToken, List.of());
        }
    }

    /**
     * One store's state of a lock, for a backend over several stores.
     *
     * @param node the store's name, without credentials
     * @param state what it holds, or {@code null} if it did not answer
     * @param error why it did not answer, or {@code null}
     */
    record NodeLockState(String node, LockState state, String error) {
    }

    /**
     * Whether the stores answer.
     *
     * @param nodes each store's answer
     * @param quorum how many stores must answer for locks to work: 1 for a single store, every
     *        master of a Redis Cluster (each holds a share of the locks), a majority for Redlock
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
     * @param node the store's name, without credentials: its {@code host:port} for a Redis node or
     *        Cluster master
     * @param reachable whether it answered in time (and, over several stores, its answers count)
     * @param latency how long the ping took; for an unreachable store, how long it was waited for
     * @param error why it is not reachable, in plain words (with the server's own reply, such as
     *        {@code WRONGPASS ...}, and the setting to check), or {@code null}
     */
    record NodeReachability(String node, boolean reachable, Duration latency, String error) {

        public NodeReachability {
            Objects.requireNonNull(node, "node");
            Objects.requireNonNull(latency, "latency");
        }
    }
}
