package io.github.distlock.redlock;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;

import io.github.distlock.core.LockBackend.AcquireResult;
import io.github.distlock.core.LockKey;

/**
 * Late grants of a Redlock, given back. A node that grants an acquire after the vote was
 * decided, and after the lock was released or the failed attempt given back, may keep a
 * key nobody will delete until its lease ends: the release may have reached that node
 * first (for example one of them was sent on a fan-out thread), or was never sent (the
 * node had a command outstanding past the node timeout). So each acquire's answers are
 * followed until all are in, and a node whose grant came late is sent the release again,
 * unless its release deleted our key there.
 */
final class LateGrants {

    /** For a token with no acquire in flight: its release answers need no following. */
    private static final VoteListener<Boolean> NOTHING_IN_FLIGHT = (index, vote, late) -> {
    };

    private final QuorumCall calls;

    /**
     * By token: acquisitions whose answers are not all in yet (see
     * {@link #acquireAnswered}).
     */
    private final ConcurrentHashMap<String, AcquiresInFlight> acquiresInFlight = new ConcurrentHashMap<>();

    LateGrants(QuorumCall calls) {
        this.calls = calls;
    }

    /**
     * An acquire round of {@code token} is about to ask every node: follows its answers,
     * to pass to {@link QuorumCall#ask} as the listener of every answer.
     */
    VoteListener<AcquireResult> acquiring(LockKey key, String token) {
        // An attempt that reuses the token of one given back (a caller of this SPI may)
        // starts afresh: the
        // facts of that attempt would have its late grants given back.
        AcquiresInFlight inFlight = acquiresInFlight.compute(token, (ours,
                existing) -> (existing != null && !existing.released ? existing : new AcquiresInFlight(calls.size()))
                    .add(calls.size()));
        return (index, vote, late) -> acquireAnswered(inFlight, key, token, index, vote, late);
    }

    /**
     * {@code token} is being released, or its failed attempt given back: from now on a
     * late grant of it is given back. Returns the listener of every answer of that
     * release.
     */
    VoteListener<Boolean> releasing(LockKey key, String token) {
        AcquiresInFlight inFlight = acquiresInFlight.get(token);
        if (inFlight == null) {
            return NOTHING_IN_FLIGHT;
        }
        inFlight.released = true;
        return (index, vote, late) -> {
            boolean deleted = vote.says(Boolean::booleanValue);
            if (inFlight.noted(index, deleted ? Fact.RELEASE_DELETED : Fact.RELEASE_NOT_DELETED)) {
                releaseAgain(key, token, index);
            }
        };
    }

    /**
     * Gives a failed attempt back on the nodes marked in {@code which}. A node still
     * working on that attempt's acquire may grant it after this (see
     * {@link #acquireAnswered}): then it is given back again when its answer comes,
     * unless this give-back deleted our key there. The nodes that granted it
     * ({@code granted}) are sent the give-back even while a command of theirs is overdue
     * ({@link NodeHealth.Responsiveness}): nothing else would take their grant back
     * before its lease ends.
     */
    void giveBack(boolean[] which, boolean[] granted, LockKey key, String token) {
        boolean any = false;
        for (boolean node : which) {
            any |= node;
        }
        if (!any) {
            return;
        }
        VoteListener<Boolean> released = releasing(key, token);
        calls.ask(which, (index, node) -> node.release(key, token), (index, node) -> node.releaseAsync(key, token),
                answers -> false, (index, vote, late) -> {
                    if (which[index]) {
                        released.answered(index, vote, late);
                    }
                }, 0, granted);
    }

    /**
     * A node's answer to an acquire, on time or late. Whether the release reached the
     * node before the grant, that node's release answer tells: it deleted our key, or it
     * found none (or was not sent). Only in the second case is the release sent again
     * (see {@link AcquiresInFlight}). A late failure (the node timeout, a dropped
     * connection) may hide a grant, so it counts as one here. Most late grants are the
     * uncontended case, answered in order on the connection that then carries the
     * release, and resending it to both late nodes made a cycle 12 commands instead of
     * 10.
     */
    private void acquireAnswered(AcquiresInFlight inFlight, LockKey key, String token, int index,
            Vote<AcquireResult> vote, boolean late) {
        if (late && inFlight.released && !Vote.refused(vote) && inFlight.noted(index, Fact.LATE_GRANT)) {
            releaseAgain(key, token, index);
        }
        // This attempt's own count: a later attempt with the same token may have a fresh
        // entry by now.
        acquiresInFlight.compute(token, (ours, state) -> inFlight.answered() && state == inFlight ? null : state);
    }

    /**
     * Sends node {@code node} the release again, without waiting for it, even while a
     * command of that node is overdue ({@link NodeHealth.Responsiveness}): this one
     * command, behind the grant on the same connection, is all that takes a late grant
     * back. Not sent, the grant stayed set, owned by nobody, for its whole lease, and a
     * few such leftovers of different attempts on a majority of nodes stalled the lock
     * for everyone until they expired.
     */
    private void releaseAgain(LockKey key, String token, int node) {
        // Possibly on the node client's I/O thread: never block here. The other nodes'
        // votes are
        // "not asked", cast at once, and settle the ballot.
        boolean[] only = calls.only(node);
        calls.ask(only, (index, target) -> target.release(key, token),
                (index, target) -> target.releaseAsync(key, token), answers -> true, null, 0, only);
    }

    /** What is known of one node's late grant and release of a token. */
    private enum Fact {

        /**
         * The node granted the acquire after the token was released, or failed late and
         * may have.
         */
        LATE_GRANT,
        /** The node's release deleted our key: it ran after our grant there. */
        RELEASE_DELETED,
        /**
         * The node's release found no key of ours, or gave no answer: it may have run
         * before the grant.
         */
        RELEASE_NOT_DELETED;

        /**
         * This fact in a node's set of facts, which is one int so that it can be updated
         * atomically.
         */
        final int bit = 1 << ordinal();

    }

    /**
     * The acquire commands of one token whose answers are not all in yet, whether the
     * token was released meanwhile (or its failed attempt given back), and per node what
     * is known of a late grant and of the release. The count is guarded by the map's
     * compute; the per-node facts are set atomically, by whichever of the two answers
     * comes second deciding whether the release must be sent again.
     */
    private static final class AcquiresInFlight {

        /**
         * A late grant, and a release that deleted nothing: the grant outlived the
         * release.
         */
        private static final int RELEASE_AGAIN = Fact.LATE_GRANT.bit | Fact.RELEASE_NOT_DELETED.bit;

        private int unanswered;

        volatile boolean released;

        private final AtomicIntegerArray facts;

        AcquiresInFlight(int nodes) {
            facts = new AtomicIntegerArray(nodes);
        }

        AcquiresInFlight add(int asked) {
            unanswered += asked;
            return this;
        }

        /** One answer came in; whether it was the last. */
        boolean answered() {
            return --unanswered == 0;
        }

        /**
         * Records {@code fact} of {@code node}; {@code true} once, when the node's
         * release must be sent again.
         */
        boolean noted(int node, Fact fact) {
            int before = facts.getAndAccumulate(node, fact.bit, (known, added) -> known | added);
            return (before & RELEASE_AGAIN) != RELEASE_AGAIN && ((before | fact.bit) & RELEASE_AGAIN) == RELEASE_AGAIN;
        }

    }

}
