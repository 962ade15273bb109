package io.github.distlock.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.curator.RetryPolicy;
import org.apache.curator.RetrySleeper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.HandOverNotifications;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.LeaseAdjustingLockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.core.QueueingLockBackend;

/**
 * Locks in ZooKeeper, on Apache Curator: the lock for work where two holders would
 * corrupt data, with the same contract as the Redis backends (handles, the watchdog,
 * lost-lease signals, fencing tokens, the annotation).
 *
 * <p>
 * <b>Layout.</b> The lock {@code order:42} lives under {@code /distributed-lock/order:42}
 * (a container node the ensemble removes once it is empty); each acquisition, held or
 * waiting, is an ephemeral sequential child {@code lock-<sha1 of its token>-<sequence>}.
 * The child with the lowest sequence holds the lock; the others wait in line, first come,
 * first served, each watching the child just before its own, so a release (a delete)
 * wakes exactly the next waiter. With {@code zkCli.sh}:
 * {@code ls /distributed-lock/order:42} shows holder and queue, {@code get -s} on the
 * first child its lease ({@code ttlMillis}, last confirmed at {@code mtime}) and its
 * fencing token ({@code cZxid}). A name's {@code /} and {@code %}, and characters
 * ZooKeeper refuses, are written as {@code %XX}.
 *
 * <p>
 * <b>Ownership.</b> A node belongs to the handle whose token it was made for, not to a
 * thread (Curator's {@code InterProcessMutex} is not used: it ties a lock to its thread).
 * Release deletes that handle's node and nothing else; the name carries the SHA-1 of the
 * token, never the token, so the tree does not give a lock away.
 *
 * <p>
 * <b>Fencing token.</b> The holder node's {@code czxid}: the id of the transaction that
 * created it, which the ensemble makes strictly increasing across every client, leader
 * change and restart, and which does not reset when the parent node is deleted. Children
 * are created in {@code czxid} order and hold in sequence order, so each holder's token
 * is larger than every earlier holder's. It costs no extra call: a caller that asks for
 * it gets it with the acquisition, and one that asks later gets it while the lease is
 * still ours.
 *
 * <p>
 * <b>Lease.</b> A node lives as long as the session that created it, and no longer than
 * its ttl: the holder deletes its own node once the ttl has run out without a renewal
 * (what a fixed lease means), and the ensemble deletes it one session timeout after it
 * last heard from the holder (a crashed, paused or cut-off holder). So a ttl may be no
 * longer than the session timeout; a longer one is refused with a message that names
 * {@value ZooKeeperLockSettings#SESSION_TIMEOUT_PROPERTY}. Every acquisition, hand-over
 * and renewal is confirmed by a write that the leader orders (a create or a
 * {@code setData} of the holder's node), made after the call started, so the JVM counts
 * its lease from a moment when the ensemble still had the node and the session. A renewal
 * that finds the node gone, or the session expired ({@link ConnectionState#LOST}),
 * reports the lease {@code LOST}; one that cannot reach the ensemble
 * ({@link ConnectionState#SUSPENDED}) reports {@code FAILED}, and the watchdog declares
 * the lease lost when it runs out unconfirmed: the handle, its listeners, the event and
 * the metrics hear of it exactly as on Redis.
 *
 * <pre>{@code
 * ZooKeeperLockBackend backend = ZooKeeperLockBackend.connect(ZooKeeperLockSettings.of("zk1:2181,zk2:2181,zk3:2181"));
 * LockWaiters waiters = new LockWaiters();
 * waiters.notificationsFrom(backend);
 * backend.deliverHandOversTo(waiters);
 * LockService locks = new DefaultLockService(backend, new LeaseWatchdog(backend, 1.0 / 3), defaults, waiters);
 * }</pre>
 */
public final class ZooKeeperLockBackend implements QueueingLockBackend, FencingLockBackend, InspectableLockBackend,
        HandOverNotifications, LeaseAdjustingLockBackend, AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

    /** The start of every lock child's name, before the token's SHA-1. */
    static final String NODE_PREFIX = "lock-";

    /**
     * Between two tries of a call whose reply a lost connection took: short, the
     * operation timeout bounds them all.
     */
    private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** A delete that failed (ensemble unreachable) is tried again this much later. */
    private static final long DELETE_RETRY_MILLIS = 250;

    private final CuratorFramework client;

    private final boolean ownsClient;

    private final ZooKeeperLockSettings settings;

    private final long operationTimeoutNanos;

    private final long sessionTimeoutMillis;

    /** Every acquisition of this JVM with a node (or a node being made), by token. */
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();

    private final List<LockWaiters> deliveries = new CopyOnWriteArrayList<>();

    /** Timers (queue places, leases, deletes to retry) and watch follow-ups. */
    private final ScheduledThreadPoolExecutor executor;

    private final ConnectionStateListener connectionListener = this::connectionChanged;

    private final String processName = Long.toString(ProcessHandle.current().pid());

    private volatile boolean closed;

    /**
     * Connects to the ensemble and builds the backend on a client of its own, which
     * {@link #close()} closes.
     * @throws IllegalStateException naming
     * {@value ZooKeeperLockSettings#CONNECT_STRING_PROPERTY} if the ensemble cannot be
     * reached within the connection timeout, or naming
     * {@value ZooKeeperLockSettings#SESSION_TIMEOUT_PROPERTY} if the ensemble grants a
     * shorter session than asked for
     */
    public static ZooKeeperLockBackend connect(ZooKeeperLockSettings settings) {
        CuratorFramework client = CuratorFrameworkFactory.builder()
            .connectString(settings.connectString())
            .sessionTimeoutMs(Math.toIntExact(settings.sessionTimeout().toMillis()))
            .connectionTimeoutMs(Math.toIntExact(settings.connectionTimeout().toMillis()))
            .retryPolicy(NoRetries.INSTANCE)
            .build();
        try {
            client.start();
            if (!client.blockUntilConnected(Math.toIntExact(settings.connectionTimeout().toMillis()),
                    TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("Could not connect to ZooKeeper at '" + settings.connectString() + "' ("
                        + ZooKeeperLockSettings.CONNECT_STRING_PROPERTY + ") within " + settings.connectionTimeout()
                        + " (" + ZooKeeperLockSettings.CONNECTION_TIMEOUT_PROPERTY
                        + "). Check that the ensemble is running and that the host:port pairs are the servers' "
                        + "client ports (clientPort in zoo.cfg, 2181 by default).");
            }
            return new ZooKeeperLockBackend(client, settings, true);
        }
        catch (InterruptedException ex) {
            client.close();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while connecting to ZooKeeper at " + settings.connectString(),
                    ex);
        }
        catch (RuntimeException ex) {
            client.close();
            throw ex;
        }
    }

    /**
     * A backend on a client the application owns, started and connected; {@link #close()}
     * leaves it open. Give the client no retry policy of its own that retries creates (a
     * retried create can leave a second node): the backend retries what is safe to retry
     * itself.
     */
    public ZooKeeperLockBackend(CuratorFramework client, ZooKeeperLockSettings settings) {
        this(client, settings, false);
    }

    private ZooKeeperLockBackend(CuratorFramework client, ZooKeeperLockSettings settings, boolean ownsClient) {
        this.client = client;
        this.settings = settings;
        this.ownsClient = ownsClient;
        this.operationTimeoutNanos = settings.operationTimeout().toNanos();
        long negotiated = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        if (negotiated > 0 && negotiated < settings.sessionTimeout().toMillis()) {
            throw new IllegalStateException("The ZooKeeper ensemble at '" + settings.connectString() + "' granted a "
                    + "session timeout of " + Duration.ofMillis(negotiated) + ", shorter than the "
                    + settings.sessionTimeout() + " asked for (" + ZooKeeperLockSettings.SESSION_TIMEOUT_PROPERTY
                    + "): the servers cap it at maxSessionTimeout (20 ticks by default). Raise maxSessionTimeout in "
                    + "zoo.cfg, or lower " + ZooKeeperLockSettings.SESSION_TIMEOUT_PROPERTY + " to at most "
                    + Duration.ofMillis(negotiated) + " (and every lock's ttl with it).");
        }
        this.sessionTimeoutMillis = settings.sessionTimeout().toMillis();
        this.executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "distributed-lock-zookeeper");
            thread.setDaemon(true);
            return thread;
        });
        this.executor.setRemoveOnCancelPolicy(true);
        client.getConnectionStateListenable().addListener(connectionListener);
    }

    /** The settings this backend was built with. */
    public ZooKeeperLockSettings settings() {
        return settings;
    }

    // ------------------------------------------------------------------------------------------
    // names

    @Override
    public LockKey lockKey(String name) {
        return new LockKey(name, settings.rootPath() + "/" + encode(name));
    }

    /**
     * A lock name as one path segment: readable as it is, except {@code /} (a separator),
     * {@code %} (the escape), {@code .} and {@code ..} (refused as names) and the
     * characters ZooKeeper refuses, each written as {@code %XX} of its UTF-8 bytes.
     */
    static String encode(String name) {
        if (name.equals(".") || name.equals("..")) {
            return name.replace(".", "%2E");
        }
        StringBuilder encoded = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean refused = c == '/' || c == '%' || c <= '\u001f' || (c >= '\u007f' && c <= '\u009f')
                    || (c >= '\ud800' && c <= '\uf8ff') || (c >= '\ufff0');
            if (!refused) {
                encoded.append(c);
                continue;
            }
            int end = Character.isHighSurrogate(c) && i + 1 < name.length()
                    && Character.isLowSurrogate(name.charAt(i + 1)) ? i + 2 : i + 1;
            for (byte b : name.substring(i, end).getBytes(StandardCharsets.UTF_8)) {
                encoded.append('%').append(String.format("%02X", b & 0xff));
            }
            i = end - 1;
        }
        return encoded.toString();
    }

    // ------------------------------------------------------------------------------------------
    // acquire, wait, release

    /**
     * {@code false}: an attempt that finds the lock taken creates a node and deletes it
     * again, two writes the ensemble must agree on, where one that queues keeps the node
     * as its place in line. Callers that will wait queue with their first attempt.
     */
    @Override
    public boolean triesBeforeQueueing() {
        return false;
    }

    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
        return tryAcquire(key, token, ttlMillis, 0, false, false);
    }

    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        requireTtlWithinSession(key, ttlMillis);
        long started = System.nanoTime();
        long deadline = started + operationTimeoutNanos;
        Entry entry = entries.get(token);
        if (entry == null) {
            // No look at the line first: a read may come from a follower that has not yet
            // seen another client's release, where our own create is ordered after it.
            entry = new Entry(key, token);
            Entry existing = entries.putIfAbsent(token, entry);
            if (existing != null) {
                entry = existing;
            }
        }
        entry.lock.lock();
        try {
            boolean waiting = entry.state == State.QUEUED && queueMillis > 0;
            AcquireResult result;
            try {
                result = attempt(entry, ttlMillis, queueMillis, deadline);
            }
            catch (LockBackendException ex) {
                if (!waiting) {
                    throw ex;
                }
                // A waiter's re-check that got no answer (an election, a reconnection)
                // changed nothing: it keeps its place and waits on. Holding needs a
                // confirming write, so nothing is counted held that is not.
                entry.queueDeadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(queueMillis);
                schedule(entry, entry.queueDeadlineNanos);
                return AcquireResult.notAcquired(0, entry.czxidBefore());
            }
            // The token is there for free, but a caller that did not ask for it draws
            // it on demand (issueFencingToken), which checks the lease is still ours.
            return result.acquired() && !fencingToken ? AcquireResult.acquired(0, result.validityMillis()) : result;
        }
        finally {
            entry.lock.unlock();
        }
    }

    /**
     * One attempt for {@code entry}, under its lock: makes its node if it has none, and
     * holds if the node is first in line, queues if the caller waits, or else gives the
     * node back.
     */
    private AcquireResult attempt(Entry entry, long ttlMillis, long queueMillis, long deadline) {
        entry.ttlMillis = ttlMillis;
        if (entry.state == State.HELD) {
            long left = TimeUnit.NANOSECONDS.toMillis(entry.leaseDeadlineNanos - System.nanoTime());
            if (left > 0) {
                return AcquireResult.acquired(entry.czxid, Math.min(left, ttlMillis));
            }
            expire(entry);
        }
        while (true) {
            if (entry.state == State.GONE || entry.state == State.EXPIRED) {
                entry.reset();
                entries.put(entry.token, entry);
            }
            boolean madeNow = false;
            if (entry.path == null) {
                create(entry, deadline);
                madeNow = true;
            }
            else if (entry.czxid == 0) {
                // Adopted from a lost reply: read what the create made.
                Stat stat = stat(entry.key, entry.path, deadline);
                if (stat == null) {
                    entry.path = null;
                    continue;
                }
                entry.czxid = stat.getCzxid();
            }
            List<String> children = children(entry.key, deadline);
            int place = sortedIndex(children, entry.path);
            if (place < 0) {
                // Our node is gone (its queue place ran out, or an operator deleted it):
                // start over.
                entry.state = State.GONE;
                continue;
            }
            if (place == 0) {
                if (!madeNow && !touch(entry, deadline)) {
                    entry.state = State.GONE;
                    continue;
                }
                hold(entry);
                return AcquireResult.acquired(entry.czxid, ttlMillis);
            }
            if (queueMillis == 0) {
                deleteNow(entry, deadline);
                return AcquireResult.notAcquired(0, entry.czxidBefore());
            }
            entry.state = State.QUEUED;
            entry.queueDeadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(queueMillis);
            schedule(entry, entry.queueDeadlineNanos);
            String predecessor = sorted(children).get(place - 1);
            if (watch(entry, entry.key.storeKey() + "/" + predecessor, deadline)) {
                return AcquireResult.notAcquired(0, entry.czxidBefore());
            }
            // The one before us went while we looked: look again.
        }
    }

    @Override
    public AcquireResult stopWaiting(LockKey key, String token, long ttlMillis) {
        Entry entry = entries.get(token);
        if (entry == null) {
            return AcquireResult.notAcquired(0, 0);
        }
        entry.lock.lock();
        try {
            if (entry.state == State.HELD) {
                long left = TimeUnit.NANOSECONDS.toMillis(entry.leaseDeadlineNanos - System.nanoTime());
                if (left > 0) {
                    return AcquireResult.acquired(entry.czxid, left);
                }
                expire(entry);
                return AcquireResult.notAcquired(0, 0);
            }
            deleteNow(entry, System.nanoTime() + operationTimeoutNanos);
            return AcquireResult.notAcquired(0, 0);
        }
        finally {
            entry.lock.unlock();
        }
    }

    @Override
    public AcquireResult confirmHandOver(LockKey key, String token, long ttlMillis, long fencingToken) {
        Entry entry = entries.get(token);
        if (entry == null) {
            return AcquireResult.notAcquired(0, 0);
        }
        entry.lock.lock();
        try {
            long left = TimeUnit.NANOSECONDS.toMillis(entry.leaseDeadlineNanos - System.nanoTime());
            if (entry.state == State.HELD && entry.czxid == fencingToken && left > 0) {
                return AcquireResult.acquired(entry.czxid, left);
            }
            return AcquireResult.notAcquired(0, 0);
        }
        finally {
            entry.lock.unlock();
        }
    }

    @Override
    public boolean release(LockKey key, String token) {
        long deadline = System.nanoTime() + operationTimeoutNanos;
        Entry entry = entries.get(token);
        if (entry == null) {
            // No acquisition of ours knows this token (a create whose reply was lost):
            // find its node by name.
            String mine = find(children(key, deadline), LockWaiters.waiterId(token));
            return mine != null && delete(key, key.storeKey() + "/" + mine, deadline) == Code.OK;
        }
        entry.lock.lock();
        try {
            boolean held = entry.state == State.HELD && entry.leaseDeadlineNanos - System.nanoTime() > 0;
            if (entry.path == null && entry.state != State.GONE) {
                String mine = find(children(key, deadline), entry.waiterId);
                entry.path = mine != null ? key.storeKey() + "/" + mine : null;
            }
            Code deleted = entry.path != null && entry.state != State.GONE ? delete(key, entry.path, deadline)
                    : Code.NONODE;
            forget(entry);
            return held && deleted == Code.OK;
        }
        finally {
            entry.lock.unlock();
        }
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        long deadline = System.nanoTime() + operationTimeoutNanos;
        List<@Nullable CompletableFuture<CuratorEvent>> sent = new ArrayList<>(renewals.size());
        List<@Nullable Entry> renewing = new ArrayList<>(renewals.size());
        for (LeaseRenewal renewal : renewals) {
            Entry entry = entries.get(renewal.token());
            String path = entry != null ? entry.path : null;
            if (entry == null || path == null || entry.state != State.HELD) {
                sent.add(null);
                renewing.add(null);
                continue;
            }
            byte[] data = nodeData(renewal.ttlMillis());
            sent.add(send(callback -> client.setData().inBackground(callback).forPath(path, data)));
            renewing.add(entry);
        }
        for (int i = 0; i < renewals.size(); i++) {
            Entry entry = renewing.get(i);
            CompletableFuture<CuratorEvent> reply = sent.get(i);
            if (entry == null || reply == null) {
                outcomes.outcome(i, RenewalOutcome.LOST);
                continue;
            }
            CuratorEvent event = await(reply, deadline);
            Code code = event != null ? Code.get(event.getResultCode()) : Code.OPERATIONTIMEOUT;
            outcomes.outcome(i, renewed(entry, code, renewals.get(i).ttlMillis()));
        }
    }

    private RenewalOutcome renewed(Entry entry, Code code, long ttlMillis) {
        entry.lock.lock();
        try {
            if (entry.state != State.HELD) {
                return RenewalOutcome.LOST;
            }
            if (code == Code.OK) {
                // Counted from the reply: later than the round's start, from which the
                // JVM counts.
                entry.ttlMillis = ttlMillis;
                entry.leaseDeadlineNanos = Math.max(entry.leaseDeadlineNanos,
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ttlMillis));
                schedule(entry, entry.leaseDeadlineNanos);
                return RenewalOutcome.RENEWED;
            }
            if (code == Code.NONODE || code == Code.SESSIONEXPIRED || code == Code.NOAUTH) {
                forget(entry);
                return RenewalOutcome.LOST;
            }
            return RenewalOutcome.FAILED;
        }
        finally {
            entry.lock.unlock();
        }
    }

    /**
     * A minimum hold: the node stays, with its lease cut to {@code remainingMillis}
     * (never lengthened), and the backend deletes it then, as it deletes any lease that
     * ran out.
     */
    @Override
    public boolean releaseAfter(LockKey key, String token, long remainingMillis) {
        if (remainingMillis <= 0) {
            return release(key, token);
        }
        Entry entry = entries.get(token);
        if (entry == null) {
            return false;
        }
        entry.lock.lock();
        try {
            long now = System.nanoTime();
            if (entry.state != State.HELD || entry.leaseDeadlineNanos - now <= 0) {
                return false;
            }
            long until = now + TimeUnit.MILLISECONDS.toNanos(remainingMillis);
            if (until - entry.leaseDeadlineNanos >= 0) {
                return true;
            }
            entry.ttlMillis = remainingMillis;
            // Records the shorter lease on the node (what zkCli.sh and the inspection
            // show).
            if (!touch(entry, now + operationTimeoutNanos)) {
                forget(entry);
                return false;
            }
            entry.leaseDeadlineNanos = until;
            schedule(entry, until);
            return true;
        }
        finally {
            entry.lock.unlock();
        }
    }

    /**
     * Sets the lease to {@code ttlMillis} from now, confirmed by a write of the node; at
     * most the session timeout, as every lease here.
     */
    @Override
    public boolean extend(LockKey key, String token, long ttlMillis) {
        requireTtlWithinSession(key, ttlMillis);
        Entry entry = entries.get(token);
        if (entry == null) {
            return false;
        }
        entry.lock.lock();
        try {
            if (entry.state != State.HELD || entry.leaseDeadlineNanos - System.nanoTime() <= 0) {
                return false;
            }
            entry.ttlMillis = ttlMillis;
            if (!touch(entry, System.nanoTime() + operationTimeoutNanos)) {
                forget(entry);
                return false;
            }
            entry.leaseDeadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ttlMillis);
            schedule(entry, entry.leaseDeadlineNanos);
            return true;
        }
        finally {
            entry.lock.unlock();
        }
    }

    /**
     * The holder node's {@code czxid}, if the lock still holds {@code token} by this
     * JVM's count. Tokens come with every acquisition, so this is rarely asked.
     */
    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        Entry entry = entries.get(token);
        if (entry == null) {
            return 0;
        }
        entry.lock.lock();
        try {
            boolean held = entry.state == State.HELD && entry.leaseDeadlineNanos - System.nanoTime() > 0;
            return held ? entry.czxid : 0;
        }
        finally {
            entry.lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------
    // wake-ups

    @Override
    public void deliverHandOversTo(LockWaiters waiters) {
        if (!deliveries.contains(waiters)) {
            deliveries.add(waiters);
        }
    }

    /**
     * Watches are set per waiter as it queues; they work while the client is connected.
     */
    @Override
    public boolean startDelivery(LockKey key) {
        return isDelivering(key);
    }

    @Override
    public boolean isDelivering(LockKey key) {
        return !closed && client.getZookeeperClient().isConnected();
    }

    /**
     * The node ahead of the entry's was written, not deleted: its holder confirmed a
     * hand-over or renewed its lease. The line is as it was, so only the watch, which
     * fired, is set again; reading the whole line again cost a read for every hand-over
     * and renewal ahead of each waiter. If the node is gone by now, the line is read
     * again as for a deletion.
     */
    private void predecessorWritten(Entry entry, String predecessor) {
        if (closed) {
            return;
        }
        boolean gone;
        entry.lock.lock();
        try {
            if (entry.state != State.QUEUED || entry.path == null) {
                return;
            }
            gone = !watch(entry, predecessor, System.nanoTime() + operationTimeoutNanos);
        }
        catch (LockBackendException ex) {
            // As in predecessorChanged: the waiter's own next attempt looks again.
            logger.debug("Could not watch {} again", predecessor, ex);
            return;
        }
        finally {
            entry.lock.unlock();
        }
        if (gone) {
            predecessorChanged(entry);
        }
    }

    /**
     * The node before a waiter's changed or went: if the waiter is first now, it holds
     * the lock; tell its thread. Otherwise watch the new node before it.
     */
    private void predecessorChanged(Entry entry) {
        if (closed) {
            return;
        }
        boolean handedOver = false;
        entry.lock.lock();
        try {
            long deadline = System.nanoTime() + operationTimeoutNanos;
            while (entry.state == State.QUEUED && entry.path != null) {
                List<String> children = children(entry.key, deadline);
                int place = sortedIndex(children, entry.path);
                if (place < 0) {
                    forget(entry);
                    return;
                }
                if (place == 0) {
                    if (!touch(entry, deadline)) {
                        forget(entry);
                        return;
                    }
                    hold(entry);
                    handedOver = true;
                    break;
                }
                if (watch(entry, entry.key.storeKey() + "/" + sorted(children).get(place - 1), deadline)) {
                    break;
                }
            }
        }
        catch (LockBackendException ex) {
            // The ensemble did not answer: the waiter's own next attempt (within a
            // second) looks again.
            logger.debug("Could not follow the wait queue of {}", entry.key.printableName(), ex);
        }
        finally {
            entry.lock.unlock();
        }
        if (handedOver) {
            for (LockWaiters waiters : deliveries) {
                waiters.handedOver(entry.waiterId, entry.czxid, entry.token::equals);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // inspection

    @Override
    public LockState inspect(LockKey key) {
        long deadline = System.nanoTime() + operationTimeoutNanos;
        while (true) {
            List<String> children = sorted(children(key, deadline));
            if (children.isEmpty()) {
                return LockState.free(0, 0);
            }
            String head = key.storeKey() + "/" + children.get(0);
            CuratorEvent event = call(key, deadline, callback -> client.getData().inBackground(callback).forPath(head));
            Stat stat = event.getStat();
            if (Code.get(event.getResultCode()) == Code.OK && stat != null) {
                long ttl = ttlOf(event.getData());
                long left = ttl > 0 ? Math.max(1, stat.getMtime() + ttl - System.currentTimeMillis())
                        : LockState.NO_EXPIRY;
                return LockState.held(left, children.size() - 1, stat.getCzxid());
            }
            // The holder went between the two calls: look again.
            pause(deadline, key);
        }
    }

    @Override
    public Reachability ping() {
        long started = System.nanoTime();
        String error = null;
        try {
            CuratorEvent event = call(new LockKey("ping", "/"), started + operationTimeoutNanos,
                    callback -> client.checkExists().inBackground(callback).forPath("/"));
            if (Code.get(event.getResultCode()) != Code.OK) {
                error = "ZooKeeper answered " + Code.get(event.getResultCode()) + "; check "
                        + ZooKeeperLockSettings.CONNECT_STRING_PROPERTY;
            }
        }
        catch (LockBackendException ex) {
            error = ex.getMessage();
        }
        return Reachability.single(new NodeReachability(settings.connectString(), error == null,
                Duration.ofNanos(System.nanoTime() - started), error));
    }

    // ------------------------------------------------------------------------------------------
    // node life

    private void create(Entry entry, long deadline) {
        String prefix = entry.key.storeKey() + "/" + NODE_PREFIX + entry.waiterId + "-";
        byte[] data = nodeData(entry.ttlMillis);
        while (true) {
            Stat stat = new Stat();
            CompletableFuture<CuratorEvent> reply = send(callback -> client.create()
                .storingStatIn(stat)
                .creatingParentContainersIfNeeded()
                .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .inBackground(callback)
                .forPath(prefix, data));
            CuratorEvent event = await(reply, deadline);
            if (event == null) {
                // Curator holds calls while it reconnects, so this create may still
                // run after we gave up; its node would be nobody's, and block the lock
                // for the session's life.
                reply.thenAcceptAsync(late -> {
                    String made = late.getName();
                    if (Code.get(late.getResultCode()) == Code.OK && made != null && !made.equals(entry.path)) {
                        deleteOrphan(made);
                    }
                }, this::submit);
                throw timedOut(entry.key);
            }
            Code code = Code.get(event.getResultCode());
            if (code == Code.OK) {
                entry.path = event.getName();
                entry.czxid = stat.getCzxid() > 0 ? stat.getCzxid()
                        : event.getStat() != null ? event.getStat().getCzxid() : 0;
                if (entry.czxid == 0) {
                    Stat read = stat(entry.key, entry.path, deadline);
                    entry.czxid = read != null ? read.getCzxid() : 0;
                }
                return;
            }
            if (!isConnectionProblem(code)) {
                throw failure(entry.key, "create a node under " + entry.key.printableStoreKey(), code);
            }
            // The reply was lost: the node may exist. Look for it before making another.
            String mine = find(children(entry.key, deadline), entry.waiterId);
            if (mine != null) {
                entry.path = entry.key.storeKey() + "/" + mine;
                Stat read = stat(entry.key, entry.path, deadline);
                if (read != null) {
                    entry.czxid = read.getCzxid();
                    return;
                }
            }
            pause(deadline, entry.key);
        }
    }

    /**
     * Confirms through the leader that our node is still there (a {@code setData}, which
     * also records when the lease was last confirmed): {@code false} if it is gone.
     */
    private boolean touch(Entry entry, long deadline) {
        String path = entry.path;
        if (path == null) {
            return false;
        }
        byte[] data = nodeData(entry.ttlMillis);
        while (true) {
            CuratorEvent event = call(entry.key, deadline,
                    callback -> client.setData().inBackground(callback).forPath(path, data));
            Code code = Code.get(event.getResultCode());
            if (code == Code.OK) {
                return true;
            }
            if (code == Code.NONODE || code == Code.SESSIONEXPIRED) {
                return false;
            }
            if (!isConnectionProblem(code)) {
                throw failure(entry.key, "confirm " + path, code);
            }
            pause(deadline, entry.key);
        }
    }

    /** The node holds: its lease starts now, after the write that confirmed it. */
    private void hold(Entry entry) {
        entry.state = State.HELD;
        entry.leaseDeadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(entry.ttlMillis);
        schedule(entry, entry.leaseDeadlineNanos);
    }

    /** A lease that ran out without a renewal: no longer ours, and its node goes. */
    private void expire(Entry entry) {
        entry.state = State.EXPIRED;
        deleteInBackground(entry);
    }

    /** Deletes the entry's node now (bounded by {@code deadline}) and forgets it. */
    private void deleteNow(Entry entry, long deadline) {
        if (entry.path != null) {
            delete(entry.key, entry.path, deadline);
        }
        forget(entry);
    }

    /**
     * Deletes the entry's node from the executor, retrying while the ensemble is out of
     * reach and the session lives: nothing may stay behind that blocks the next holder.
     */
    private void deleteInBackground(Entry entry) {
        String path = entry.path;
        if (path == null || closed) {
            forget(entry);
            return;
        }
        CompletableFuture<CuratorEvent> reply = send(callback -> client.delete().inBackground(callback).forPath(path));
        // On the executor, never on ZooKeeper's event thread: the entry's lock may
        // be held by a caller waiting for a reply only that thread can deliver.
        reply.whenCompleteAsync((event, failure) -> {
            Code code = event != null ? Code.get(event.getResultCode()) : Code.SYSTEMERROR;
            if (code == Code.OK || code == Code.NONODE || code == Code.SESSIONEXPIRED || closed) {
                entry.lock.lock();
                try {
                    if (path.equals(entry.path)) {
                        forget(entry);
                    }
                }
                finally {
                    entry.lock.unlock();
                }
                return;
            }
            try {
                executor.schedule(() -> deleteInBackground(entry), DELETE_RETRY_MILLIS, TimeUnit.MILLISECONDS);
            }
            catch (RejectedExecutionException ex) {
                // Closing: the session's end deletes the node.
            }
        }, this::submit);
    }

    /** The entry is done with: its node deleted or gone. */
    private void forget(Entry entry) {
        entry.state = State.GONE;
        entry.cancelTimer();
        entries.remove(entry.token, entry);
    }

    private void schedule(Entry entry, long atNanos) {
        entry.cancelTimer();
        if (closed) {
            return;
        }
        try {
            entry.timer = executor.schedule(() -> timerFired(entry), Math.max(0, atNanos - System.nanoTime()),
                    TimeUnit.NANOSECONDS);
        }
        catch (RejectedExecutionException ex) {
            // Closing.
        }
    }

    /** A queue place or a lease may have run out. */
    private void timerFired(Entry entry) {
        entry.lock.lock();
        try {
            long now = System.nanoTime();
            if (entry.state == State.QUEUED) {
                if (now - entry.queueDeadlineNanos >= 0) {
                    // The waiter stopped refreshing its place: it is gone, so is its
                    // node.
                    entry.state = State.EXPIRED;
                    deleteInBackground(entry);
                }
                else {
                    schedule(entry, entry.queueDeadlineNanos);
                }
            }
            else if (entry.state == State.HELD) {
                if (now - entry.leaseDeadlineNanos >= 0) {
                    expire(entry);
                }
                else {
                    schedule(entry, entry.leaseDeadlineNanos);
                }
            }
        }
        finally {
            entry.lock.unlock();
        }
    }

    private void connectionChanged(CuratorFramework source, ConnectionState state) {
        if (state == ConnectionState.LOST) {
            // The session is over: the ensemble deletes (or has deleted) every node it
            // made.
            for (Entry entry : entries.values()) {
                entry.state = State.GONE;
                entry.cancelTimer();
                entries.remove(entry.token, entry);
            }
        }
        else if (state == ConnectionState.RECONNECTED) {
            // A watch that fired while we were away is delivered on reconnection; look
            // anyway.
            for (Entry entry : entries.values()) {
                if (entry.state == State.QUEUED) {
                    submit(() -> predecessorChanged(entry));
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // calls

    private List<String> children(LockKey key, long deadline) {
        while (true) {
            CuratorEvent event = call(key, deadline,
                    callback -> client.getChildren().inBackground(callback).forPath(key.storeKey()));
            Code code = Code.get(event.getResultCode());
            if (code == Code.OK) {
                List<String> children = event.getChildren();
                return children != null ? children : List.of();
            }
            if (code == Code.NONODE) {
                return List.of();
            }
            if (!isConnectionProblem(code)) {
                throw failure(key, "list " + key.printableStoreKey(), code);
            }
            pause(deadline, key);
        }
    }

    private @Nullable Stat stat(LockKey key, String path, long deadline) {
        while (true) {
            CuratorEvent event = call(key, deadline,
                    callback -> client.checkExists().inBackground(callback).forPath(path));
            Code code = Code.get(event.getResultCode());
            if (code == Code.OK) {
                return event.getStat();
            }
            if (code == Code.NONODE) {
                return null;
            }
            if (!isConnectionProblem(code)) {
                throw failure(key, "read " + path, code);
            }
            pause(deadline, key);
        }
    }

    /**
     * Watches {@code predecessor} for the entry: {@code false} if it is already gone (no
     * watch is left on a missing node).
     */
    private boolean watch(Entry entry, String predecessor, long deadline) {
        while (true) {
            CuratorEvent event = call(entry.key, deadline,
                    callback -> client.getData()
                        .usingWatcher(entry.watcher)
                        .inBackground(callback)
                        .forPath(predecessor));
            Code code = Code.get(event.getResultCode());
            if (code == Code.OK) {
                return true;
            }
            if (code == Code.NONODE) {
                return false;
            }
            if (!isConnectionProblem(code)) {
                throw failure(entry.key, "watch " + predecessor, code);
            }
            pause(deadline, entry.key);
        }
    }

    private Code delete(LockKey key, String path, long deadline) {
        while (true) {
            CuratorEvent event = call(key, deadline, callback -> client.delete().inBackground(callback).forPath(path));
            Code code = Code.get(event.getResultCode());
            if (code == Code.OK || code == Code.NONODE || code == Code.SESSIONEXPIRED) {
                // SESSIONEXPIRED: the session that made it is over, and the node with it.
                return code;
            }
            if (!isConnectionProblem(code)) {
                throw failure(key, "delete " + path, code);
            }
            pause(deadline, key);
        }
    }

    /**
     * Sends one background call and waits for its reply until {@code deadline}, whatever
     * the thread's interrupt flag says (and leaving it as it was).
     * @throws LockBackendException if no reply came in time
     */
    private CuratorEvent call(LockKey key, long deadline, Sender sender) {
        CuratorEvent event = await(send(sender), deadline);
        if (event == null) {
            throw timedOut(key);
        }
        return event;
    }

    private LockBackendException timedOut(LockKey key) {
        return new LockBackendException(key.name(), "ZooKeeper at '" + settings.connectString()
                + "' did not answer a call for lock " + key.printableName() + " within " + settings.operationTimeout()
                + " (" + ZooKeeperLockSettings.OPERATION_TIMEOUT_PROPERTY + "); whether it ran is unknown. "
                + "Check that a majority of the ensemble's members is up: without a quorum it answers " + "nothing.",
                new TimeoutException("no reply from ZooKeeper"));
    }

    /**
     * Deletes a node that a call made after its caller gave up, retrying while the
     * ensemble is away.
     */
    private void deleteOrphan(String path) {
        send(callback -> client.delete().inBackground(callback).forPath(path)).whenCompleteAsync((event, failure) -> {
            Code code = event != null ? Code.get(event.getResultCode()) : Code.SYSTEMERROR;
            if (isConnectionProblem(code) && !closed) {
                try {
                    executor.schedule(() -> deleteOrphan(path), DELETE_RETRY_MILLIS, TimeUnit.MILLISECONDS);
                }
                catch (RejectedExecutionException ex) {
                    // Closing: the session's end deletes it.
                }
            }
        }, this::submit);
    }

    private CompletableFuture<CuratorEvent> send(Sender sender) {
        CompletableFuture<CuratorEvent> reply = new CompletableFuture<>();
        if (closed) {
            reply.completeExceptionally(new IllegalStateException("closed"));
            return reply;
        }
        try {
            sender.send((source, event) -> reply.complete(event));
        }
        catch (Exception ex) {
            reply.completeExceptionally(ex);
        }
        return reply;
    }

    /**
     * The reply, or {@code null} if none came by {@code deadline} (or the call failed to
     * go out).
     */
    private static @Nullable CuratorEvent await(CompletableFuture<CuratorEvent> reply, long deadline) {
        boolean interrupted = Thread.interrupted();
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                try {
                    return reply.get(Math.max(0, left), TimeUnit.NANOSECONDS);
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                }
                catch (TimeoutException | ExecutionException ex) {
                    return null;
                }
            }
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A short pause before the next try, bounded by {@code deadline}; an interrupt does
     * not cut it short, and stays set.
     */
    private static void pause(long deadline, LockKey key) {
        boolean interrupted = Thread.interrupted();
        try {
            long until = Math.min(deadline, System.nanoTime() + RETRY_PAUSE_NANOS);
            for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime()) {
                LockSupport.parkNanos(key, left);
                interrupted |= Thread.interrupted();
            }
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static boolean isConnectionProblem(Code code) {
        return code == Code.CONNECTIONLOSS || code == Code.OPERATIONTIMEOUT || code == Code.SESSIONMOVED;
    }

    private LockBackendException failure(LockKey key, String what, Code code) {
        return new LockBackendException(
                key.name(), "ZooKeeper refused to " + what + " for lock " + key.printableName() + ": " + code
                        + " (ensemble '" + settings.connectString() + "').",
                new IllegalStateException(code.toString()));
    }

    private void submit(Runnable work) {
        try {
            executor.execute(work);
        }
        catch (RejectedExecutionException ex) {
            // Closing.
        }
    }

    private void requireTtlWithinSession(LockKey key, long ttlMillis) {
        if (ttlMillis > sessionTimeoutMillis) {
            throw new IllegalArgumentException("Lock " + key.printableName() + " asks for a ttl of "
                    + Duration.ofMillis(ttlMillis) + ", longer than the ZooKeeper session timeout of "
                    + Duration.ofMillis(sessionTimeoutMillis) + " (" + ZooKeeperLockSettings.SESSION_TIMEOUT_PROPERTY
                    + "): the ensemble deletes a holder's node one session timeout after it last heard from it, so "
                    + "the lease could outlive the lock. Lower the ttl to at most "
                    + Duration.ofMillis(sessionTimeoutMillis) + ", or raise "
                    + ZooKeeperLockSettings.SESSION_TIMEOUT_PROPERTY + " (and the servers' maxSessionTimeout).");
        }
    }

    // ------------------------------------------------------------------------------------------
    // names of children

    private byte[] nodeData(long ttlMillis) {
        return ("ttlMillis=" + ttlMillis + "\npid=" + processName + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** The ttl a node's data records, or 0 if it records none (a foreign node). */
    static long ttlOf(byte @Nullable [] data) {
        if (data == null) {
            return 0;
        }
        for (String line : new String(data, StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith("ttlMillis=")) {
                try {
                    return Long.parseLong(line.substring("ttlMillis=".length()).trim());
                }
                catch (NumberFormatException ex) {
                    return 0;
                }
            }
        }
        return 0;
    }

    private static @Nullable String find(List<String> children, String waiterId) {
        String prefix = NODE_PREFIX + waiterId + "-";
        for (String child : children) {
            if (child.startsWith(prefix)) {
                return child;
            }
        }
        return null;
    }

    /** The children in line order: by the sequence ZooKeeper appended. */
    static List<String> sorted(List<String> children) {
        List<String> sorted = new ArrayList<>(children);
        sorted.sort(Comparator.comparingLong(ZooKeeperLockBackend::sequenceOf));
        return sorted;
    }

    private static int sortedIndex(List<String> children, String path) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        return sorted(children).indexOf(name);
    }

    /**
     * The sequence of a child, or {@code Long.MAX_VALUE} for a name of another client.
     */
    static long sequenceOf(String child) {
        int dash = child.lastIndexOf('-');
        try {
            return dash >= 0 ? Long.parseLong(child.substring(dash + 1)) : Long.MAX_VALUE;
        }
        catch (NumberFormatException ex) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * Closes the client if the backend made it (the session's end deletes every node of
     * this JVM); on an application's own client, deletes the nodes of this JVM's locks.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        executor.shutdownNow();
        client.getConnectionStateListenable().removeListener(connectionListener);
        if (ownsClient) {
            client.close();
            return;
        }
        for (Entry entry : entries.values()) {
            String path = entry.path;
            if (path != null) {
                try {
                    client.delete().inBackground().forPath(path);
                }
                catch (Exception ex) {
                    // The session's end deletes it.
                }
            }
        }
        entries.clear();
    }

    @Override
    public String toString() {
        return "ZooKeeperLockBackend[" + settings.connectString() + settings.rootPath() + "]";
    }

    /** Sends one background call to Curator. */
    @FunctionalInterface
    private interface Sender {

        void send(BackgroundCallback callback) throws Exception;

    }

    private enum State {

        /** Its node is being made, or was made by a call whose reply was lost. */
        NEW,
        /** Waiting in line. */
        QUEUED,
        /** First in line, with a lease this JVM counts. */
        HELD,
        /** Its lease or queue place ran out; its node is being deleted. */
        EXPIRED,
        /** Its node is deleted, or its session is over. */
        GONE

    }

    /** One acquisition of this JVM: its token, its node, its place and its lease. */
    private final class Entry {

        final LockKey key;

        final String token;

        final String waiterId;

        /**
         * Held during every call about the entry; calls are bounded by the operation
         * timeout.
         */
        final ReentrantLock lock = new ReentrantLock();

        /** One object per entry, so a predecessor watched twice fires once. */
        final Watcher watcher;

        volatile State state = State.NEW;

        volatile @Nullable String path;

        volatile long czxid;

        volatile long ttlMillis;

        volatile long queueDeadlineNanos;

        volatile long leaseDeadlineNanos;

        volatile @Nullable ScheduledFuture<?> timer;

        Entry(LockKey key, String token) {
            this.key = key;
            this.token = token;
            this.waiterId = LockWaiters.waiterId(token);
            this.watcher = event -> submit(() -> {
                if (event.getType() == Watcher.Event.EventType.NodeDataChanged && event.getPath() != null) {
                    predecessorWritten(this, event.getPath());
                }
                else {
                    predecessorChanged(this);
                }
            });
        }

        /** Announcements up to here are older than this node: its own czxid is above. */
        long czxidBefore() {
            return Math.max(0, czxid - 1);
        }

        void reset() {
            cancelTimer();
            state = State.NEW;
            path = null;
            czxid = 0;
            leaseDeadlineNanos = 0;
        }

        void cancelTimer() {
            ScheduledFuture<?> scheduled = timer;
            if (scheduled != null) {
                scheduled.cancel(false);
                timer = null;
            }
        }

    }

    /**
     * No retries by Curator: a create retried after a lost reply can make a second node,
     * so the backend retries itself, looking for its node first.
     */
    enum NoRetries implements RetryPolicy {

        INSTANCE;

        @Override
        public boolean allowRetry(int retryCount, long elapsedTimeMs, RetrySleeper sleeper) {
            return false;
        }

        @Override
        public boolean allowRetry(Throwable exception) {
            return false;
        }

    }

}
