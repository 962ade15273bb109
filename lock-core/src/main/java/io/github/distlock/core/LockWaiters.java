package io.github.distlock.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * The threads of this JVM that wait for a lock, and the hand-overs announced to them.
 *
 * <p>
 * A release hands the lock to the longest-waiting live waiter in Redis and announces it
 * on the one subscription of this JVM ({@link #handedOver}); only that waiter wakes up,
 * and it already owns the lock. Entries exist only while someone waits, so the registry
 * is empty again once the waits are over, however many distinct keys were waited on.
 *
 * <p>
 * An announcement is a claim, and two checks stand between it and a handle that reports
 * the lock held:
 * <ul>
 * <li><b>Proven.</b> Waiters are addressed by {@link #waiterId(String) the SHA-1 of their
 * token}, never by the token (a capability: whoever knows it can release the lock), and
 * the message must carry a proof that only someone who knew the token could make. A
 * forged message is ignored.</li>
 * <li><b>Newer than what we saw.</b> A proven message may still arrive late: the
 * hand-over it announces may have expired, and the lock gone to someone else, while the
 * message was on its way. So each attempt of the waiter reports the key's fencing counter
 * ({@link Waiter#seen}), and an announced token not above it is from before that attempt
 * and is dropped. A newer one was drawn after our last attempt ran, so the lease it
 * grants is counted from that attempt's sending, which is never later than Redis's own
 * count.</li>
 * </ul>
 *
 * <p>
 * <b>Polling waiters</b> (a backend without a wait queue, such as Redlock) line up per
 * key in arrival order. A release hint for the key ({@link #releaseHinted}) wakes the
 * longest-waiting of them only, and only once per release however many nodes announce it;
 * the others keep their randomized retry as a fallback. A thread that starts waiting
 * while a woken thread has not tried yet queues behind it instead of trying first: a
 * releaser that locks again at once would otherwise win every release, and the line would
 * starve.
 *
 * <p>
 * Waiters park with {@link LockSupport} rather than {@code Object.wait}, so a waiting
 * virtual thread does not pin its carrier.
 */
public final class LockWaiters {

    static {
        // Looks SHA-1 up once here, on the thread that builds the lock service: the
        // provider lookup initialises
        // classes, and a class initialised on a virtual thread (a waiter's first wait)
        // pins it to its carrier.
        sha1Hex("");
    }

    private final ConcurrentHashMap<String, Waiter> byId = new ConcurrentHashMap<>();

    /**
     * Polling waiters by {@link LockKey#redisKey()}, in arrival order; a key's entry goes
     * with its last waiter.
     */
    private final ConcurrentHashMap<String, PollingLine> polling = new ConcurrentHashMap<>();

    private volatile Predicate<LockKey> notificationsActive = key -> false;

    private volatile Predicate<LockKey> notificationsDelivered = key -> false;

    /**
     * Tells the registry how to know whether hand-over messages for a key are currently
     * being delivered. While they are not, waiters on that key poll with a short backoff
     * instead of trusting the wake-up. Per key, because a delivery may cover some keys
     * only: sharded pub/sub in a Redis Cluster subscribes per hash slot.
     * @param active asked when a thread is about to wait for {@code key}; may start the
     * delivery (a subscription) and answer {@code false} until it runs
     * @param delivered asked before every attempt of a waiting thread; must not start
     * anything, so that locks nobody waits for never open a subscription
     */
    public void notificationsFrom(Predicate<LockKey> active, Predicate<LockKey> delivered) {
        this.notificationsActive = active;
        this.notificationsDelivered = delivered;
    }

    /**
     * Takes the hand-over announcements {@code source} delivers as the waiters' wake-ups.
     */
    public void notificationsFrom(HandOverNotifications source) {
        notificationsFrom(source::startDelivery, source::isDelivering);
    }

    /**
     * {@link #notificationsFrom(Predicate, Predicate)} for a delivery that covers every
     * key alike.
     */
    public void notificationsFrom(BooleanSupplier active, BooleanSupplier delivered) {
        notificationsFrom(key -> active.getAsBoolean(), key -> delivered.getAsBoolean());
    }

    /**
     * Starts the delivery of hand-over messages for {@code key} if it is not running, and
     * says whether it runs now.
     */
    public boolean startNotifications(LockKey key) {
        return notificationsActive.test(key);
    }

    /**
     * Whether hand-over messages for {@code key} are being delivered now, without
     * starting anything.
     */
    public boolean notificationsDelivered(LockKey key) {
        return notificationsDelivered.test(key);
    }

    /**
     * The id a waiter is announced by: the SHA-1 of its token in lower-case hex, a public
     * name that does not give the token away. A store that hands locks over addresses its
     * announcements by it (the Redis scripts compute the same with
     * {@code redis.sha1hex}).
     */
    public static String waiterId(String token) {
        return sha1Hex(token);
    }

    /** SHA-1 of the UTF-8 bytes of {@code text}, in lower-case hex. */
    public static String sha1Hex(String text) {
        try {
            return HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("Every Java platform has SHA-1", ex);
        }
    }

    /**
     * A release announced that it handed a lock to the waiter {@code waiterId}: wakes it,
     * if it is one of ours, still waiting, and the proof holds. Hand-overs to waiters of
     * other JVMs are ignored.
     * @param waiterId the waiter's {@link #waiterId(String) id}
     * @param fencingToken the fencing token drawn with the hand-over
     * @param proof whether the message was made by someone who knew the given waiter
     * token
     */
    public void handedOver(String waiterId, long fencingToken, Predicate<String> proof) {
        Waiter waiter = byId.get(waiterId);
        if (waiter != null && fencingToken > 0 && proof.test(waiter.token)) {
            waiter.handOver(fencingToken);
        }
    }

    /** The number of threads of this JVM waiting for a lock right now. */
    public int waiting() {
        int pollers = 0;
        for (PollingLine line : polling.values()) {
            pollers += line.pollers.size();
        }
        return byId.size() + pollers;
    }

    /**
     * A release of {@code storeKey} was announced (a hint, never proof that the lock is
     * free): wakes the longest-waiting polling thread of this JVM for it, which then
     * tries again at once. The same release announced again (by another node) wakes
     * nobody more.
     * @param storeKey the released lock's {@link LockKey#redisKey()}
     * @param releaseId what tells one release from another (the same on every node's
     * announcement of it), or {@code null} if the announcement has none: then every
     * announcement wakes
     */
    public void releaseHinted(String storeKey, @Nullable String releaseId) {
        polling.computeIfPresent(storeKey, (k, line) -> {
            if (releaseId == null || !releaseId.equals(line.lastRelease)) {
                line.lastRelease = releaseId;
                line.wakeFirst();
            }
            return line;
        });
    }

    /**
     * A thread of this JVM released {@code key}. With announcements being delivered, its
     * hint wakes the longest waiter (in every JVM alike, so none is favoured); until the
     * woken waiter tries, new callers queue behind it. Without, the longest waiter here
     * is woken now.
     */
    public void releasedHere(LockKey key, boolean announced) {
        releasedHere(key, announced, null);
    }

    /**
     * {@link #releasedHere(LockKey, boolean)} for a release announced with
     * {@code releaseId} ({@link #releaseHinted}; {@code null} if the announcement has
     * none): if its announcement has already arrived, the waiter it woke holds new
     * callers back by itself (and may have tried already), so nothing is left pending.
     */
    public void releasedHere(LockKey key, boolean announced, @Nullable String releaseId) {
        polling.computeIfPresent(key.storeKey(), (k, line) -> {
            if (announced && releaseId != null && releaseId.equals(line.lastRelease)) {
                return line;
            }
            if (announced) {
                line.releasePending = true;
            }
            else {
                line.wakeFirst();
            }
            return line;
        });
    }

    /**
     * Whether a waiter of this JVM has been woken for (or is about to be woken by) a
     * release of {@code key} and has not tried yet: a new caller should queue behind it
     * rather than try first.
     */
    boolean wakePending(LockKey key) {
        PollingLine line = polling.get(key.storeKey());
        if (line == null) {
            return false;
        }
        Poller first = line.pollers.peek();
        return line.releasePending || (first != null && first.woken);
    }

    /**
     * The calling thread starts polling for {@code key}: it joins the end of the key's
     * line.
     */
    Poller enterPolling(LockKey key) {
        Poller[] entered = new Poller[1];
        polling.compute(key.storeKey(), (k, line) -> {
            PollingLine joined = line != null ? line : new PollingLine();
            entered[0] = new Poller(joined, Thread.currentThread());
            joined.pollers.add(entered[0]);
            return joined;
        });
        return entered[0];
    }

    /**
     * The thread stops polling (it got the lock, or gave up). A wake-up it did not use
     * goes to the next in line, so that a release is not left unanswered by a waiter that
     * timed out.
     */
    void leavePolling(LockKey key, Poller poller) {
        polling.computeIfPresent(key.storeKey(), (k, line) -> {
            if (line != poller.line) {
                return line;
            }
            line.pollers.remove(poller);
            if (poller.woken && !poller.acquired) {
                line.wakeFirst();
            }
            return line.pollers.isEmpty() ? null : line;
        });
    }

    Waiter enter(String token) {
        Waiter waiter = new Waiter(token, waiterId(token), Thread.currentThread());
        byId.put(waiter.id, waiter);
        return waiter;
    }

    void leave(Waiter waiter) {
        byId.remove(waiter.id, waiter);
    }

    /** The polling waiters of one key, longest-waiting first. */
    static final class PollingLine {

        private final ConcurrentLinkedQueue<Poller> pollers = new ConcurrentLinkedQueue<>();

        /**
         * The release that last woke a waiter here; its announcements by other nodes wake
         * nobody more.
         */
        private volatile @Nullable String lastRelease;

        /**
         * Released in this JVM, and the waiter its announcement will wake has not tried
         * yet.
         */
        private volatile boolean releasePending;

        private void wakeFirst() {
            Poller first = pollers.peek();
            if (first != null) {
                first.wake();
            }
        }

    }

    /** One thread polling for a lock. */
    static final class Poller {

        private final PollingLine line;

        private final Thread thread;

        /** A release hint woke us since our last attempt. */
        private volatile boolean woken;

        /** Set when the thread leaves with the lock, so its wake-up is not passed on. */
        volatile boolean acquired;

        Poller(PollingLine line, Thread thread) {
            this.line = line;
            this.thread = thread;
        }

        /**
         * An attempt starts: a wake-up until now is answered by it. If this thread is the
         * first in line, a release of this JVM that was waiting for its announcement is
         * answered too.
         */
        void attempting() {
            woken = false;
            if (line.pollers.peek() == this) {
                line.releasePending = false;
            }
        }

        /**
         * Parks until a release hint wakes this thread, {@code nanos} pass or the thread
         * is interrupted. A hint that came since the last attempt returns at once, so
         * none is missed. Woken, it returns at once: the waiters one release woke in
         * several JVMs then ask together, which over Redlock the arbiter node settles (a
         * random pause here used to keep their votes apart, and cost every hand-over half
         * a millisecond on average).
         * @return whether a hint woke it
         */
        boolean await(long nanos) {
            long deadline = System.nanoTime() + nanos;
            long remaining = nanos;
            while (!woken && remaining > 0 && !thread.isInterrupted()) {
                LockSupport.parkNanos(this, remaining);
                remaining = deadline - System.nanoTime();
            }
            return woken;
        }

        private void wake() {
            woken = true;
            LockSupport.unpark(thread);
        }

    }

    /** One waiting thread. */
    static final class Waiter {

        private static final AtomicLongFieldUpdater<Waiter> ANNOUNCED = AtomicLongFieldUpdater.newUpdater(Waiter.class,
                "announced");

        private final String token;

        private final String id;

        private final Thread thread;

        /** The highest proven fencing token announced to us. */
        private volatile long announced;

        /**
         * The highest fencing counter our attempts saw; only the waiting thread uses it.
         */
        private long seen;

        Waiter(String token, String id, Thread thread) {
            this.token = token;
            this.id = id;
            this.thread = thread;
        }

        /**
         * An attempt found the lock taken, with the key's fencing counter at
         * {@code fencingCounter}: announcements up to it are older than that attempt.
         */
        void seen(long fencingCounter) {
            seen = Math.max(seen, fencingCounter);
        }

        /**
         * Parks until a hand-over newer than every attempt so far is announced,
         * {@code nanos} pass or the thread is interrupted. One announced before this call
         * returns at once, so none is missed.
         * @return the announced fencing token, or 0 if there is none newer than our
         * attempts
         */
        long await(long nanos) {
            long deadline = System.nanoTime() + nanos;
            long remaining = nanos;
            while (announced <= seen && remaining > 0 && !thread.isInterrupted()) {
                LockSupport.parkNanos(this, remaining);
                remaining = deadline - System.nanoTime();
            }
            long token = announced;
            return token > seen ? token : 0;
        }

        private void handOver(long fencingToken) {
            long current;
            do {
                current = announced;
            }
            while (fencingToken > current && !ANNOUNCED.compareAndSet(this, current, fencingToken));
            LockSupport.unpark(thread);
        }

    }

}
