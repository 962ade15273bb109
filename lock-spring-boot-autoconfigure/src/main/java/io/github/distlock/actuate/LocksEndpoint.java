package io.github.distlock.actuate;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

import org.springframework.aot.hint.annotation.RegisterReflectionForBinding;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.ActiveLocks;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.InspectableLockBackend.LockState;
import io.github.distlock.core.InspectableLockBackend.NodeLockState;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockContext;
import io.github.distlock.core.LockKey;

/**
 * The {@code locks} Actuator endpoint, read-only: the locks this instance holds and the
 * callers of this instance waiting for one ({@code GET /actuator/locks}), and what Redis
 * holds for one key ({@code GET /actuator/locks/{key}}).
 *
 * <p>
 * It never shows a holder's random token: that token is a capability (whoever knows it
 * can release the lock). It shows the fencing token, which grants nothing.
 *
 * <p>
 * A lock released within its minimum hold ({@code minHold}) is no longer among the locks
 * this instance holds: its handle is released and nothing runs under it. The store still
 * holds it until the minimum hold ends, which {@code GET /actuator/locks/{key}} shows as
 * held, with what is left of the minimum hold as its lease.
 *
 * <p>
 * A key may contain {@code /}: {@code GET /actuator/locks/orders/42} inspects the key
 * {@code orders/42}. Other characters that are special in a URL ({@code ?}, {@code #},
 * {@code %}, spaces) are percent-encoded as usual ({@code order%3F1} for
 * {@code order?1}); an encoded slash ({@code %2F}) is refused by most servlet containers,
 * so write {@code /} as it is.
 *
 * <pre>{@code
 * management.endpoints.web.exposure.include=health,locks
 * }</pre>
 */
@Endpoint(id = "locks")
@RegisterReflectionForBinding({ LocksEndpoint.Locks.class, LocksEndpoint.KeyState.class })
public class LocksEndpoint {

    private final ActiveLocks activeLocks;

    private final String defaultName;

    private final LockBackend backend;

    /**
     * The other backends locks can name, by name; inspected only where they hold a key.
     */
    private final Map<String, LockBackend> others;

    /**
     * @param activeLocks this instance's holders and waiters (a {@code LockListener} of
     * the lock service)
     * @param backend the store to inspect keys in
     */
    public LocksEndpoint(ActiveLocks activeLocks, LockBackend backend) {
        this(activeLocks, Map.of(DefaultLockService.DEFAULT_BACKEND, backend), DefaultLockService.DEFAULT_BACKEND);
    }

    /**
     * An endpoint over several backends: a key is inspected in the default one, and in
     * each other one that holds it.
     * @param activeLocks this instance's holders and waiters
     * @param backends every backend locks can name, by name
     * @param defaultName the one that keeps locks naming none
     * ({@code distributed-lock.backend})
     */
    public LocksEndpoint(ActiveLocks activeLocks, Map<String, LockBackend> backends, String defaultName) {
        this.activeLocks = Objects.requireNonNull(activeLocks, "activeLocks");
        this.defaultName = Objects.requireNonNull(defaultName, "defaultName");
        this.backend = Objects.requireNonNull(backends.get(defaultName), () -> "no backend named " + defaultName);
        Map<String, LockBackend> rest = new LinkedHashMap<>(backends);
        rest.remove(defaultName);
        this.others = Collections.unmodifiableMap(rest);
    }

    /**
     * The locks this instance holds, longest-held first, and its callers waiting,
     * longest-waiting first.
     */
    @ReadOperation
    public Locks locks() {
        return new Locks(holders(activeLocks.held(), null), waiters(activeLocks.waiting(), null));
    }

    /**
     * What the store holds for {@code key} now (held or free, remaining lease, queue
     * length, last fencing token), and who in this instance holds it or waits for it. The
     * store is the default backend ({@code distributed-lock.backend}); each other named
     * backend is asked too, and listed under {@code otherBackends} where it holds the key
     * or cannot be asked.
     * @param key the key's path segments, joined by {@code /} again: a key may contain
     * slashes
     */
    @ReadOperation
    public KeyState lock(@Selector(match = Match.ALL_REMAINING) String... key) {
        String name = String.join("/", key);
        List<Holder> heldHere = holders(activeLocks.held(), name);
        List<Waiter> waitingHere = waiters(activeLocks.waiting(), name);
        KeyState here = inspect(defaultName, backend, name, heldHere, waitingHere);
        List<KeyState> elsewhere = new ArrayList<>();
        for (Map.Entry<String, LockBackend> other : others.entrySet()) {
            KeyState there = inspect(other.getKey(), other.getValue(), name, List.of(), List.of());
            if (!Boolean.FALSE.equals(there.held())) {
                elsewhere.add(there);
            }
        }
        return new KeyState(name, here.redisKey(), here.held(), here.pttlMillis(), here.queueLength(),
                here.lastFencingToken(), here.nodes(), heldHere, waitingHere, here.error(), defaultName, elsewhere);
    }

    /** What {@code store} holds for {@code name}, with no other backend's view. */
    private static KeyState inspect(String backendName, LockBackend store, String name, List<Holder> heldHere,
            List<Waiter> waitingHere) {
        LockKey lockKey = store.lockKey(name);
        if (!(store instanceof InspectableLockBackend inspectable)) {
            return new KeyState(name, lockKey.storeKey(), null, null, null, null, List.of(), heldHere, waitingHere,
                    "The lock backend (" + store.getClass().getName() + ") cannot be inspected: it does not "
                            + "implement InspectableLockBackend",
                    backendName, List.of());
        }
        LockState state;
        try {
            state = inspectable.inspect(lockKey);
        }
        catch (LockBackendException ex) {
            return new KeyState(name, lockKey.storeKey(), null, null, null, null, List.of(), heldHere, waitingHere,
                    ex.getMessage(), backendName, List.of());
        }
        List<Node> nodes = new ArrayList<>();
        for (NodeLockState node : state.nodes()) {
            LockState of = node.state();
            nodes.add(of == null ? new Node(node.node(), null, null, null, null, node.error())
                    : new Node(node.node(), of.held(), pttl(of), of.queueLength(), fence(of), node.error()));
        }
        return new KeyState(name, lockKey.storeKey(), state.held(), pttl(state), state.queueLength(), fence(state),
                nodes, heldHere, waitingHere, null, backendName, List.of());
    }

    /**
     * The lease left as the endpoint has always shown it, in the terms of Redis's PTTL:
     * -2 for a free lock.
     */
    private static long pttl(LockState state) {
        return state.held() ? state.leaseLeftMillis() : -2;
    }

    private static Long fence(LockState state) {
        return state.lastFencingToken() > 0 ? state.lastFencingToken() : null;
    }

    private static List<Holder> holders(List<LockContext> held, String key) {
        List<Holder> holders = new ArrayList<>();
        Instant now = Instant.now();
        for (LockContext lock : held) {
            if (key != null && !key.equals(lock.key())) {
                continue;
            }
            Instant since = lock.acquiredAt();
            OptionalLong fence = lock.fencingToken();
            holders.add(new Holder(lock.key(), lock.name(), lock.storeKey(), lock.threadName(), String.valueOf(since),
                    since != null ? Math.max(0, now.toEpochMilli() - since.toEpochMilli()) : 0,
                    lock.leaseLeft().toMillis(), lock.ttl().toMillis(), lock.watchdog(), lock.renewals(),
                    fence.isPresent(), fence.isPresent() ? fence.getAsLong() : null, lock.waitTime().toMillis(),
                    lock.backend()));
        }
        return holders;
    }

    private static List<Waiter> waiters(List<LockContext> waiting, String key) {
        List<Waiter> waiters = new ArrayList<>();
        Instant now = Instant.now();
        for (LockContext lock : waiting) {
            if (key != null && !key.equals(lock.key())) {
                continue;
            }
            long waitedMillis = lock.waitTime().toMillis();
            waiters.add(new Waiter(lock.key(), lock.name(), lock.storeKey(), lock.threadName(),
                    now.minusMillis(waitedMillis).toString(), waitedMillis, lock.backend()));
        }
        return waiters;
    }

    /**
     * This instance's locks.
     *
     * @param held the locks it holds, longest-held first
     * @param waiting its callers waiting for a lock, longest-waiting first
     */
    public record Locks(List<Holder> held, List<Waiter> waiting) {
    }

    /**
     * A lock this instance holds.
     *
     * @param key the lock's key, for example {@code order:42}
     * @param name what metrics call it: the request's name, {@code Class.method} for the
     * annotation, or {@code unnamed}
     * @param redisKey the key in Redis, for example {@code lock:{order:42}}
     * @param thread the thread that acquired it
     * @param since when it was acquired (ISO-8601)
     * @param heldForMillis for how long it has been held
     * @param leaseLeftMillis how long this instance counts its lease to last from now
     * @param ttlMillis the lease asked for
     * @param watchdog whether the watchdog renews the lease
     * @param renewals how many renewals succeeded
     * @param fencingTokenIssued whether a fencing token was issued to this holder
     * @param fencingToken the fencing token, if issued
     * @param waitedMillis how long its acquisition took
     * @param backend the backend that keeps it ({@code redis}, {@code etcd}, ...)
     */
    public record Holder(String key, String name, String redisKey, String thread, String since, long heldForMillis,
            long leaseLeftMillis, long ttlMillis, boolean watchdog, int renewals, boolean fencingTokenIssued,
            Long fencingToken, long waitedMillis, String backend) {
    }

    /**
     * A caller of this instance waiting for a lock.
     *
     * @param key the lock's key
     * @param name what metrics call it
     * @param redisKey the key in Redis
     * @param thread the waiting thread
     * @param since when it started to acquire (ISO-8601)
     * @param waitingForMillis how long it has waited so far
     * @param backend the backend it waits on
     */
    public record Waiter(String key, String name, String redisKey, String thread, String since, long waitingForMillis,
            String backend) {
    }

    /**
     * One key, as the store holds it and as this instance uses it.
     *
     * @param key the key
     * @param redisKey the key in Redis
     * @param held whether the lock is held, by any instance or client ({@code null} if
     * the store could not be asked)
     * @param pttlMillis Redis's {@code PTTL} of the lock: milliseconds left, -1 for no
     * expiry, -2 for free
     * @param queueLength entries in its wait queue
     * @param lastFencingToken the last fencing token issued for it, if any within a day
     * @param nodes for Redlock, each node's state; otherwise empty
     * @param heldHere this instance's holder of it, if any
     * @param waitingHere this instance's callers waiting for it
     * @param error why the store could not be asked, or {@code null}
     * @param backend the backend these fields describe: the default one
     * @param otherBackends the key in each other named backend that holds it or could not
     * be asked (their {@code heldHere} and {@code waitingHere} are empty: this instance's
     * users are listed once, above, each with its backend)
     */
    public record KeyState(String key, String redisKey, Boolean held, Long pttlMillis, Long queueLength,
            Long lastFencingToken, List<Node> nodes, List<Holder> heldHere, List<Waiter> waitingHere, String error,
            String backend, List<KeyState> otherBackends) {
    }

    /**
     * One Redlock node's state of a key.
     *
     * @param node the node, without credentials
     * @param held whether the node holds the key ({@code null} if it did not answer)
     * @param pttlMillis the node's {@code PTTL} of the key
     * @param queueLength entries in its wait queue there
     * @param lastFencingToken its fencing counter there
     * @param error why it did not answer or does not count, or {@code null}
     */
    public record Node(String node, Boolean held, Long pttlMillis, Long queueLength, Long lastFencingToken,
            String error) {
    }

}
