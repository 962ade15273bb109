package io.github.distlock.redlock;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.github.distlock.core.LockBackend.AcquireResult;
import io.github.distlock.core.LockKey;

/**
 * How a Redlock's contenders for one key take turns instead of splitting the vote. Only
 * liveness is at stake here: whatever this decides, the lock is ours only with a
 * majority.
 * <ul>
 * <li><b>Arbiter.</b> A key found taken is contended for a second: its attempts ask one
 * node, the arbiter, alone first, and the others only if it granted
 * ({@link #askArbiterFirst}).</li>
 * <li><b>Wake-up line.</b> A contender that asks the arbiter joins the key's wake-up line
 * there, so that the arbiter's release wakes the instance at its head
 * ({@link RedlockReleaseHints}).</li>
 * <li><b>Yield.</b> The thread that released a contended key waits a moment before it
 * asks again, so that the waiters its release woke elsewhere get to the arbiter
 * first.</li>
 * <li><b>Split-vote keeper.</b> When nobody won, the contender holding the first node
 * that answered keeps its grants and asks for the rest again
 * ({@link #keepSplitVote}).</li>
 * </ul>
 */
final class ContentionPolicy {

    /**
     * How many more rounds the winner of a split vote asks the nodes it lacks (see
     * {@link #wonSplitVote}).
     */
    private static final int SPLIT_VOTE_RETRIES = 2;

    private static final long MIN_SPLIT_VOTE_PAUSE_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

    private static final long MAX_SPLIT_VOTE_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    /**
     * How long a key found taken counts as contended: its attempts ask the arbiter node
     * first.
     */
    private static final long CONTENDED_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * How often a contended key is still put to every node: the arbiter alone can't tell
     * a lock held by a majority from a leftover on that node only (a release or give-back
     * still on its way, a client that died mid-vote), which would otherwise stall the key
     * until the leftover expires.
     */
    private static final long FULL_VOTE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * How long the thread that released a contended key waits before it asks for it
     * again: the waiters its release woke in other JVMs get to the arbiter first, instead
     * of the releaser winning every time it locks again at once (it hears of its own
     * release before anyone).
     */
    private static final long YIELD_NANOS = TimeUnit.MICROSECONDS.toNanos(500);

    /**
     * Bound of {@link #contention}; past it, entries older than {@link #CONTENDED_NANOS}
     * go.
     */
    private static final int MAX_CONTENDED_KEYS = 4096;

    private final QuorumCall calls;

    private final NodeHealth health;

    /** Sends release hints to waiters, or {@code null}: then nobody waits in line. */
    private final RedlockReleaseHints hints;

    /**
     * Each node's index, made once: an arbiter is picked on every contended attempt and
     * release.
     */
    private final OptionalInt[] nodeIndexes;

    /**
     * By lock key: when attempts of this backend found it taken (see
     * {@link #askArbiterFirst}).
     */
    private final ConcurrentHashMap<String, Contention> contention = new ConcurrentHashMap<>();

    ContentionPolicy(QuorumCall calls, NodeHealth health, RedlockReleaseHints hints) {
        this.calls = calls;
        this.health = health;
        this.hints = hints;
        this.nodeIndexes = new OptionalInt[calls.size()];
        for (int i = 0; i < nodeIndexes.length; i++) {
            nodeIndexes[i] = OptionalInt.of(i);
        }
    }

    /**
     * One round of acquire votes: the nodes marked in {@code which}, decided once a
     * majority is held.
     */
    @FunctionalInterface
    interface AcquireRound {

        /**
         * @param alreadyHeld grants this attempt holds from an earlier round, on nodes
         * not asked now
         * @param lineNode the node asked to put this instance in the key's wake-up line,
         * if any
         */
        List<Vote<AcquireResult>> votes(boolean[] which, int alreadyHeld, OptionalInt lineNode);

    }

    /**
     * A key this backend found taken.
     *
     * @param takenAt when an attempt last found it taken
     * @param fullVoteAt when every node was last asked for it
     * @param releasedAt when a thread of this backend last released it since, or 0
     * @param releasedBy that thread, or {@code null}
     */
    record Contention(long takenAt, long fullVoteAt, long releasedAt, Thread releasedBy) {

        Contention(long takenAt, long fullVoteAt) {
            this(takenAt, fullVoteAt, 0, null);
        }

        boolean askArbiterFirst(long now) {
            return now - takenAt < CONTENDED_NANOS && now - fullVoteAt < FULL_VOTE_EVERY_NANOS;
        }
    }

    /**
     * What this backend knows of contention for {@code key}, or {@code null} if it never
     * found it taken.
     */
    Contention contended(LockKey key) {
        return contention.get(key.storeKey());
    }

    /**
     * The node an attempt that starts at {@code start} asks alone first: the arbiter, if
     * the key is contended now and a node qualifies.
     */
    OptionalInt arbiterFirst(Contention contended, long start) {
        return contended != null && contended.askArbiterFirst(start) ? arbiter() : OptionalInt.empty();
    }

    /**
     * The node an attempt that asks every node at once asks to join the wake-up line, if
     * any.
     */
    OptionalInt lineNodeForFullVote(Contention contended) {
        if (contended == null) {
            return OptionalInt.empty();
        }
        OptionalInt arbiter = arbiter();
        return arbiter.isPresent() ? lineNode(arbiter.getAsInt()) : OptionalInt.empty();
    }

    /**
     * The acquisition of a contended key: asks the arbiter node alone, and the others
     * only if it granted the lock (or did not answer). Every contender woken by the same
     * release would otherwise ask all nodes at once and split the vote, each then giving
     * back what it got: on a few cores shared with the nodes, most of a contended
     * Redlock's work. The arbiter grants one of them, and the others stop after one
     * command that set nothing. Safety is the same either way: the lock is ours only with
     * a majority, the arbiter's vote among them. Uncontended keys keep the single round
     * of the fan-out.
     * @return the votes of every node; if the arbiter {@link Vote#refused refused}, the
     * others were not asked, and nothing was set anywhere
     */
    List<Vote<AcquireResult>> askArbiterFirst(int arbiter, Contention contended, long start, AcquireRound round) {
        long yieldFor = contended.releasedAt + YIELD_NANOS - start;
        if (yieldFor > 0 && contended.releasedBy == Thread.currentThread()) {
            LockSupport.parkNanos(yieldFor);
        }
        List<Vote<AcquireResult>> first = round.votes(calls.only(arbiter), 0, lineNode(arbiter));
        Vote<AcquireResult> arbiterVote = first.get(arbiter);
        if (Vote.refused(arbiterVote)) {
            return first;
        }
        boolean[] others = calls.all();
        others[arbiter] = false;
        List<Vote<AcquireResult>> votes = new ArrayList<>(
                round.votes(others, Vote.granted(arbiterVote) ? 1 : 0, OptionalInt.empty()));
        votes.set(arbiter, arbiterVote);
        return votes;
    }

    /**
     * The votes after the split-vote keeper's rounds: while nobody has a majority and we
     * hold the first node that answered (see {@link #wonSplitVote}), asks the nodes we
     * lack again, within half the ttl.
     */
    List<Vote<AcquireResult>> keepSplitVote(List<Vote<AcquireResult>> votes, long start, long ttlMillis,
            AcquireRound round) {
        for (int retry = 0; retry < SPLIT_VOTE_RETRIES && wonSplitVote(votes)
                && System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(ttlMillis) / 2; retry++) {
            // Nobody has a majority, and we hold the first node that answered: the
            // callers that split
            // the vote with us see the same and give theirs back, so we keep ours and ask
            // the other
            // nodes again once their releases have landed, instead of everyone backing
            // off at random
            // and colliding again. One round trip later, a little more each time.
            long roundNanos = System.nanoTime() - start;
            LockSupport.parkNanos(Math.max(MIN_SPLIT_VOTE_PAUSE_NANOS,
                    Math.min(MAX_SPLIT_VOTE_PAUSE_NANOS, roundNanos * (retry + 1))));
            boolean[] missing = new boolean[calls.size()];
            int held = 0;
            for (int i = 0; i < votes.size(); i++) {
                missing[i] = !Vote.granted(votes.get(i));
                held += missing[i] ? 0 : 1;
            }
            List<Vote<AcquireResult>> again = round.votes(missing, held, OptionalInt.empty());
            List<Vote<AcquireResult>> merged = new ArrayList<>(votes.size());
            for (int i = 0; i < votes.size(); i++) {
                merged.add(missing[i] ? again.get(i) : votes.get(i));
            }
            votes = merged;
        }
        return votes;
    }

    /**
     * An attempt found {@code key} taken: it counts as contended for a while.
     * @param askedArbiterFirst whether the attempt asked the arbiter first; if not, every
     * node was asked at {@code start}
     */
    void foundTaken(LockKey key, Contention contended, boolean askedArbiterFirst, long start) {
        Contention found = new Contention(System.nanoTime(), askedArbiterFirst ? contended.fullVoteAt : start);
        if (contention.size() >= MAX_CONTENDED_KEYS) {
            contention.values().removeIf(entry -> found.takenAt - entry.takenAt >= CONTENDED_NANOS);
        }
        contention.put(key.storeKey(), found);
    }

    /**
     * The calling thread released {@code key}: if it is contended, this thread yields on
     * its next attempt.
     */
    void released(LockKey key) {
        Contention contended = contention.get(key.storeKey());
        if (contended != null) {
            // See YIELD_NANOS.
            contention.put(key.storeKey(),
                    new Contention(contended.takenAt, contended.fullVoteAt, System.nanoTime(), Thread.currentThread()));
        }
    }

    /**
     * The node contenders ask first: the first in order that answers and whose votes
     * count. All contenders pick the same one while they see the nodes alike (the one
     * {@link #wonSplitVote} favours too); if they don't, only how fast it goes suffers.
     * Empty if none qualifies.
     */
    OptionalInt arbiter() {
        long now = System.nanoTime();
        for (int i = 0; i < calls.size(); i++) {
            if (health.isHealthy(i, now, calls.nodeTimeoutNanos())) {
                return nodeIndexes[i];
            }
        }
        return OptionalInt.empty();
    }

    /**
     * {@code arbiter} if this instance can wait in line there: a node whose hints, those
     * for this instance included, reach it now (a node without wake-up lines only takes
     * the lock).
     */
    private OptionalInt lineNode(int arbiter) {
        return hints != null && hints.isDelivering(arbiter) ? nodeIndexes[arbiter] : OptionalInt.empty();
    }

    /**
     * Whether a vote split between contenders and we are the one to keep our grants: no
     * majority for us, a majority of nodes answered, fewer than a majority are held by
     * others (so nobody else can have won among them), and the first node that answered
     * is ours. Every contender that saw the same answers draws the same conclusion, as
     * only one of them can hold that node; one that saw different answers (a node
     * answered some and not others) may keep its grants too, and then both give up after
     * {@link #SPLIT_VOTE_RETRIES} rounds. Either way only liveness is at stake: the lock
     * is ours only with a majority.
     */
    private static boolean wonSplitVote(List<Vote<AcquireResult>> votes) {
        int granted = 0;
        int taken = 0;
        boolean firstAnsweredIsOurs = false;
        for (Vote<AcquireResult> vote : votes) {
            if (!vote.answered()) {
                continue;
            }
            if (granted + taken == 0) {
                firstAnsweredIsOurs = Vote.granted(vote);
            }
            if (Vote.granted(vote)) {
                granted++;
            }
            else {
                taken++;
            }
        }
        int quorum = votes.size() / 2 + 1;
        return granted > 0 && granted < quorum && granted + taken >= quorum && taken < quorum && firstAnsweredIsOurs;
    }

}
