package io.github.distlock.redlock;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Whether one Redlock node's votes count: the delayed-restart rule, enforced from the
 * client.
 *
 * <p>
 * A node without persistence that crashes and comes back empty has forgotten every lock
 * it granted, and would grant them again: with its vote, a second client can reach a
 * majority while the first still holds the lock. Redlock's answer is that a restarted
 * node must not vote until every lease it may have granted has run out. Nothing on the
 * server enforces that, so the client does:
 * <ul>
 * <li>a node's votes stop counting the moment our connection to it drops or is
 * re-established ({@link #connectionChanged()}, called on the client's I/O thread before
 * any reply on a new connection is read, so no vote of a restarted node is counted before
 * this);</li>
 * <li>they count again once {@code INFO server} has been read on the new connection
 * ({@link #verified}), and only once the node has been up longer than the longest lease
 * the application uses. That holds at the application's start too: a node up for less
 * than that may have restarted after granting a lock to another instance, so right after
 * the nodes themselves start, Redlocks are refused for one longest lease;</li>
 * <li>a changed {@code run_id} is a restart, whatever {@code uptime_in_seconds} says: the
 * address may now lead to another long-running but empty server (a DNS or VIP failover to
 * a standby, a replaced pod), or a restarted node's clock may have stepped forward. Such
 * a node is held back for one longest lease from when the change was seen, on this JVM's
 * monotonic clock, and a WARN says so;</li>
 * <li>a node declared durable (AOF with {@code appendfsync always}, which does not
 * forget) is trusted after a restart as soon as it is verified;</li>
 * <li>a node whose clock jumped forward ({@link NodeClock}, read in the reply of every
 * vote and renewal and in each check) may have expired the leases it granted early, and
 * is held back like a changed {@code run_id}, durable or not: for one longest lease from
 * when the jump was seen, before the reply that showed it is counted.</li>
 * </ul>
 *
 * <p>
 * The longest lease is the largest of the default ttl and every ttl the application has
 * asked for since it started, as a lease granted by another instance of the same
 * application is no longer than that.
 */
public final class NodeRestartGuard {

    private static final Log logger = LogFactory.getLog(NodeRestartGuard.class);

    private final String node;

    private final boolean durable;

    private final LongSupplier longestLeaseMillis;

    /** The node's run id as last read, or {@code null} before the first check. */
    private volatile String runId;

    /** Checked since the last connection change. */
    private volatile boolean verified;

    /**
     * When the node's process started, as a {@link System#nanoTime} value: now less its
     * uptime at the last check, less a second (see {@link #verified}); but never before
     * its run id was last seen to change.
     */
    private volatile long upSinceNanos;

    /**
     * Whether a change of {@link #runId} was seen: then the node counts as up since
     * {@link #identityChangedNanos}.
     */
    private volatile boolean identityChanged;

    /**
     * When the last change of {@link #runId} was seen, as a {@link System#nanoTime}
     * value.
     */
    private volatile long identityChangedNanos;

    private final NodeClock clock = new NodeClock();

    /** Whether a forward jump of the node's clock was seen. */
    private volatile boolean clockJumped;

    /**
     * When the last forward jump of the node's clock was seen, as a
     * {@link System#nanoTime} value.
     */
    private volatile long clockJumpedNanos;

    /** The last hold-back logged, so that each restart is logged once. */
    private volatile String loggedFor;

    /**
     * Counts connection changes, so a check that raced with a newer change does not
     * verify it.
     */
    private final AtomicLong connectionEpoch = new AtomicLong();

    /**
     * @param node the node's name, for log lines
     * @param durable whether the node keeps every acknowledged write across a restart
     * @param longestLeaseMillis the longest lease the application uses now; asked on
     * every vote, so a longer lease asked for later holds a restarted node back longer
     */
    public NodeRestartGuard(String node, boolean durable, LongSupplier longestLeaseMillis) {
        this.node = node;
        this.durable = durable;
        this.longestLeaseMillis = longestLeaseMillis;
    }

    /** Whether the node's answers count now. */
    public boolean votes() {
        if (!verified) {
            return false;
        }
        long now = System.nanoTime();
        long longestNanos = TimeUnit.MILLISECONDS.toNanos(longestLeaseMillis.getAsLong());
        if (clockJumped && now - clockJumpedNanos < longestNanos) {
            return false;
        }
        return durable || now - upSinceNanos >= longestNanos;
    }

    /**
     * What the node's clock read in a check ({@code server_time_usec} of {@code INFO
     * server}), before {@link #verified} is told the check's outcome. A changed
     * {@code run_id} is another server, or a restart, with a clock of its own: that is
     * held back by {@link #verified}, and the clock is judged from this reading on.
     * @param nodeRunId the {@code run_id} the same {@code INFO} read
     * @param sentNanos {@link System#nanoTime} before it was sent
     * @param receivedNanos {@link System#nanoTime} when its reply arrived
     * @param serverMicros the node's clock, microseconds since the epoch
     */
    public void serverTime(String nodeRunId, long sentNanos, long receivedNanos, long serverMicros) {
        String known = runId;
        if (known != null && !known.equals(nodeRunId)) {
            clock.forget();
        }
        serverTime(sentNanos, receivedNanos, serverMicros);
    }

    /**
     * What the node's clock read in a reply
     * ({@link io.github.distlock.redis.ServerClockListener}): a forward jump holds its
     * votes back for one longest lease from now, this reply's included.
     * @param sentNanos {@link System#nanoTime} before the command was sent
     * @param receivedNanos {@link System#nanoTime} when its reply arrived
     * @param serverMicros the node's clock, microseconds since the epoch
     */
    public void serverTime(long sentNanos, long receivedNanos, long serverMicros) {
        long jumpNanos = clock.forwardJump(sentNanos, receivedNanos, serverMicros);
        if (jumpNanos <= 0) {
            return;
        }
        clockJumpedNanos = System.nanoTime();
        clockJumped = true;
        long longest = longestLeaseMillis.getAsLong();
        logger.warn("Redlock node " + node + "'s clock jumped forward by at least "
                + Duration.ofNanos(jumpNanos).toMillis() + " ms: it expires keys by that clock, so it may have "
                + "let go of locks it granted before their time. Its votes do not count for the longest lease ("
                + Duration.ofMillis(longest) + ") from now, until about " + Instant.now().plusMillis(longest)
                + ". Keep the nodes' clocks slewed (NTP without steps).");
    }

    /**
     * The connection to the node dropped or came back: its votes stop counting until it
     * is checked.
     */
    public void connectionChanged() {
        connectionEpoch.incrementAndGet();
        verified = false;
    }

    /**
     * The current connection epoch, to pass to {@link #verified} with the result of a
     * check.
     */
    public long epoch() {
        return connectionEpoch.get();
    }

    /**
     * The outcome of an {@code INFO server} on the connection of {@code epoch}.
     * @param epoch {@link #epoch()} when the check was sent
     * @param nodeRunId the node's {@code run_id}
     * @param uptimeSeconds the node's {@code uptime_in_seconds}
     */
    public void verified(long epoch, String nodeRunId, long uptimeSeconds) {
        String known = runId;
        runId = nodeRunId;
        long now = System.nanoTime();
        boolean changed = known != null && !known.equals(nodeRunId);
        if (changed) {
            identityChangedNanos = now;
            identityChanged = true;
        }
        // Redis counts uptime as the difference of two whole-second clock readings (its
        // start and
        // now), so a node up for 10 ms can report 1 s: take one second off, to err late.
        long uptimeMillis = Math.max(0, uptimeSeconds - 1) * 1_000;
        long upSince = now - TimeUnit.MILLISECONDS.toNanos(uptimeMillis);
        // A new identity is trusted no earlier than its uptime says, nor than when we
        // first saw it: its
        // uptime is another server's, or read off a clock that may have jumped.
        upSinceNanos = identityChanged && upSince - identityChangedNanos < 0 ? identityChangedNanos : upSince;
        long longest = longestLeaseMillis.getAsLong();
        long waitMillis = TimeUnit.NANOSECONDS.toMillis(upSinceNanos - now) + longest;
        if (!durable && waitMillis > 0 && !nodeRunId.equals(loggedFor)) {
            loggedFor = nodeRunId;
            if (changed) {
                logger.warn("Redlock node " + node + " changed its run_id from " + known + " to " + nodeRunId
                        + " (it reports " + Duration.ofMillis(uptimeMillis).toSeconds() + " s of uptime): it "
                        + "restarted, or another server answers at its address now (a DNS or VIP failover, a "
                        + "replaced pod), and it may not hold the locks granted before, whatever its uptime says. "
                        + "Its votes do not count for the longest lease (" + Duration.ofMillis(longest)
                        + ") from now, until about " + Instant.now().plusMillis(waitMillis) + ". Declare it in "
                        + "distributed-lock.redlock.durable-nodes only if it runs with appendfsync always and its "
                        + "address always leads to the same data.");
            }
            else {
                logger.warn("Redlock node " + node + " started " + Duration.ofMillis(uptimeMillis).toSeconds()
                        + " s ago and may have forgotten locks it granted; its votes do not count until it has been "
                        + "up as long as the longest lease (" + Duration.ofMillis(longest) + "), until about "
                        + Instant.now().plusMillis(waitMillis) + ". Declare it in "
                        + "distributed-lock.redlock.durable-nodes if it runs with appendfsync always.");
            }
        }
        // Only if nothing changed since the check was sent: a check of an older
        // connection says
        // nothing about the current one.
        if (connectionEpoch.get() == epoch) {
            verified = true;
        }
    }

    /** The node's {@code run_id} as last read, or {@code null} before the first check. */
    String runId() {
        return runId;
    }

    /** The node's name. */
    public String node() {
        return node;
    }

}
