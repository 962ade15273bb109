package io.github.distlock.redis;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;

/**
 * This client's own copies of the scripts a Redlock node votes with, so that a node that restarted or changed
 * identity is seen in the very round trip of its vote, not at the next check.
 *
 * <p>Each script here is the library's script with a random nonce in a trailing comment: a script no other
 * client sends, with a digest of its own. The node's restart check loads them ({@link #load}, {@code SCRIPT
 * LOAD}) before it reads {@code INFO server}, and votes send them by digest only, never by source. Redis keeps no
 * script across a restart, so a node that restarted (empty or from a snapshot), whose scripts were flushed, or
 * whose address now leads to another server, answers {@code NOSCRIPT} instead of voting: the vote fails, and
 * {@code whenNotCached} holds the node back until the check has read its {@code run_id} again. A keep-alive proxy
 * between the client and the node, which hides the restart from the connection, hides nothing from this.
 *
 * <pre>{@code
 * NodeIncarnation incarnation = new NodeIncarnation(() -> guard.connectionChanged());
 * RedisLockBackend node = new RedisLockBackend(connection, "lock:", "lock:released", incarnation);
 * incarnation.load(connection);   // then INFO server: the node counts once both are read
 * }</pre>
 */
public final class NodeIncarnation {

    private static final SecureRandom RANDOM = new SecureRandom();

    /** The acquire vote: {@code SET NX PX} as a script. */
    final LuaScript vote;
    /** The arbiter node's acquire, which also keeps the wake-up line. */
    final LuaScript arbiterVote;
    final LuaScript renew;
    final LuaScript fence;
    final LuaScript raiseFence;
    private final String nonce;

    /**
     * @param whenNotCached told, on a client I/O thread or the caller's, whenever the node answers a vote with
     *        {@code NOSCRIPT}; must not block
     */
    public NodeIncarnation(Runnable whenNotCached) {
        byte[] random = new byte[16];
        RANDOM.nextBytes(random);
        this.nonce = HexFormat.of().formatHex(random);
        this.vote = LockScripts.REDLOCK_VOTE.incarnation(nonce, whenNotCached);
        this.arbiterVote = LockScripts.REDLOCK_ACQUIRE.incarnation(nonce, whenNotCached);
        this.renew = LockScripts.RENEW.incarnation(nonce, whenNotCached);
        this.fence = LockScripts.FENCE.incarnation(nonce, whenNotCached);
        this.raiseFence = LockScripts.RAISE_FENCE.incarnation(nonce, whenNotCached);
    }

    /**
     * Loads every script into the node's cache, on the connection the votes use (behind a proxy, the same
     * upstream). Call it before reading the node's {@code run_id}: a restart between the two then shows as a new
     * {@code run_id}, and one after both as {@code NOSCRIPT}.
     *
     * @throws io.github.distlock.LockBackendException if the node does not answer in time or refuses
     */
    public void load(LockConnection connection) {
        for (LuaScript script : List.of(vote, arbiterVote, renew, fence, raiseFence)) {
            connection.load(script);
        }
    }

    /** The nonce, for messages and tests. */
    public String nonce() {
        return nonce;
    }
}
