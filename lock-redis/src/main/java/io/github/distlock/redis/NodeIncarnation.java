package io.github.distlock.redis;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;

/**
 * This client's own copies of the scripts a Redlock node votes with, so that a node that
 * restarted or changed identity is seen in the very round trip of its vote, not at the
 * next check.
 *
 * <p>
 * Each script here is the library's script with a random nonce in a trailing comment: a
 * script no other client sends, with a digest of its own. The node's restart check loads
 * them ({@link #load}, {@code SCRIPT
 * LOAD}) before it reads {@code INFO server}, and votes send them by digest only, never
 * by source. Redis keeps no script across a restart, so a node that restarted (empty or
 * from a snapshot), whose scripts were flushed, or whose address now leads to another
 * server, answers {@code NOSCRIPT} instead of voting: the vote fails, and
 * {@code whenNotCached} holds the node back until the check has read its {@code run_id}
 * again. A keep-alive proxy between the client and the node, which hides the restart from
 * the connection, hides nothing from this.
 *
 * <p>
 * A server keeps the scripts it was sent for as long as it runs, so one nonce must only
 * ever be known to one server: when a check finds another {@code run_id} than the one the
 * current nonce was loaded on, it calls {@link #rotate} and the node counts again only
 * once a check has loaded the new nonce on that server. An address that later leads back
 * to the first server (a VIP that fails back, a standby reused) then finds it without the
 * current scripts.
 *
 * <pre>{@code
 * NodeIncarnation incarnation = new NodeIncarnation(guard::connectionChanged, guard::serverTime);
 * LettuceLockBackend node = new LettuceLockBackend(connection, "lock:", "lock:released", incarnation);
 * incarnation.load(connection);   // then INFO server: the node counts once both are read
 * }</pre>
 */
public final class NodeIncarnation {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final Runnable whenNotCached;

    private final ServerClockListener serverClock;

    private volatile Scripts scripts;

    /**
     * The {@code run_id} of the server the current scripts were loaded on, or
     * {@code null} before a check found it.
     */
    private String boundTo;

    /**
     * @param whenNotCached told, on a client I/O thread or the caller's, whenever the
     * node answers a vote with {@code NOSCRIPT}; must not block
     */
    public NodeIncarnation(Runnable whenNotCached) {
        this(whenNotCached, ServerClockListener.NONE);
    }

    /**
     * @param whenNotCached told, on a client I/O thread or the caller's, whenever the
     * node answers a vote with {@code NOSCRIPT}; must not block
     * @param serverClock told the node's clock from each vote's and renewal's reply,
     * before the reply counts
     */
    public NodeIncarnation(Runnable whenNotCached, ServerClockListener serverClock) {
        this.whenNotCached = whenNotCached;
        this.serverClock = serverClock;
        this.scripts = new Scripts(newNonce(), whenNotCached);
    }

    private static String newNonce() {
        byte[] random = new byte[16];
        RANDOM.nextBytes(random);
        return HexFormat.of().formatHex(random);
    }

    /**
     * Loads every current script into the node's cache, on the connection the votes use
     * (behind a proxy, the same upstream). Call it before reading the node's
     * {@code run_id}: a restart between the two then shows as a new {@code run_id}, and
     * one after both as {@code NOSCRIPT}.
     * @throws io.github.distlock.LockBackendException if the node does not answer in time
     * or refuses
     */
    public void load(LockConnection connection) {
        for (LuaScript script : scripts.all()) {
            connection.load(script);
        }
    }

    /**
     * Votes from now on use scripts of a new nonce, which no server has yet: the current
     * ones were loaded on a server that no longer answers at this address, or may be.
     */
    public synchronized void rotate() {
        scripts = new Scripts(newNonce(), whenNotCached);
        boundTo = null;
    }

    /**
     * Binds the current scripts to the server a check loaded them on.
     * @param runId the {@code run_id} read before and after {@link #load}, the same both
     * times
     * @return {@code true} if they are that server's; {@code false} if they were loaded
     * on another server before, which may still have them: they are {@link #rotate
     * rotated}, and the next check binds the new ones
     */
    public synchronized boolean bind(String runId) {
        if (boundTo == null) {
            boundTo = runId;
            return true;
        }
        if (boundTo.equals(runId)) {
            return true;
        }
        rotate();
        return false;
    }

    /** The current nonce, for messages and tests. */
    public synchronized String nonce() {
        return scripts.nonce();
    }

    /** The scripts votes use now. */
    Scripts scripts() {
        return scripts;
    }

    /** Where the node's clock, as its votes and renewals answer it, goes. */
    ServerClockListener serverClock() {
        return serverClock;
    }

    /**
     * One nonce's scripts.
     *
     * @param vote the acquire vote: {@code SET NX PX} as a script
     * @param arbiterVote the arbiter node's acquire, which also keeps the wake-up line
     */
    record Scripts(String nonce, LuaScript vote, LuaScript arbiterVote, LuaScript renew, LuaScript fence,
            LuaScript raiseFence) {

        Scripts(String nonce, Runnable whenNotCached) {
            this(nonce, LockScripts.REDLOCK_VOTE.incarnation(nonce, whenNotCached),
                    LockScripts.REDLOCK_ACQUIRE.incarnation(nonce, whenNotCached),
                    LockScripts.REDLOCK_RENEW.incarnation(nonce, whenNotCached),
                    LockScripts.FENCE.incarnation(nonce, whenNotCached),
                    LockScripts.RAISE_FENCE.incarnation(nonce, whenNotCached));
        }

        List<LuaScript> all() {
            return List.of(vote, arbiterVote, renew, fence, raiseFence);
        }
    }

}
