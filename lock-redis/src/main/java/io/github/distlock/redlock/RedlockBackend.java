package io.github.distlock.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAccumulator;

import org.springframework.context.SmartLifecycle;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.LeaseAdjustingLockBackend;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.RedisKeyNaming;

/**
 * Redlock: one lock over N independent Redis masters, held while a majority of them holds
 * it.
 *
 * <p>
 * Each node is a single-Redis {@link LockBackend} of its own (in practice a
 * {@link io.github.distlock.redis.LettuceLockBackend} on its own client), so every node
 * runs the same commands and scripts as a single Redis does, with the same wire format.
 * This class coordinates parts that each have one job:
 * <ul>
 * <li>{@link QuorumCall}: asks every node at once, each bounded by the node timeout, and
 * stops waiting as soon as the answers settle the outcome; validity = ttl − time the vote
 * took − (ttl × drift factor + 2 ms), on the monotonic clock;</li>
 * <li>{@link NodeHealth}: a node that leaves commands unanswered is only probed, and a
 * restarted node's votes do not count until it has been up longer than the longest lease
 * ({@link NodeRestartGuard});</li>
 * <li>{@link ContentionPolicy}: contenders for a key found taken ask an arbiter node
 * first and wait in its wake-up line, so that the waiters one release woke in several
 * JVMs don't split the vote;</li>
 * <li>{@link LateGrants}: a grant that lands after its attempt failed or was released is
 * given back;</li>
 * <li>{@link QuorumFencing} and {@link QuorumRenewal}: fencing tokens and renewals over a
 * majority.</li>
 * </ul>
 *
 * <p>
 * <b>Acquire</b> succeeds once N/2+1 nodes granted it while it is still valid, without
 * waiting for the others. Otherwise it gives back what may have been set (on every node
 * that did not answer "taken") and reports the lock taken; the lock service retries
 * within the wait time. A majority that granted it too slowly for the ttl is
 * {@link RedlockValidityException}. <b>Release</b> reports released once a majority
 * deleted it and the arbiter answered, and sends a release hint to the waiters
 * ({@link RedlockReleaseHints}): from the arbiter's release script to the head of its
 * wake-up line, or from the nodes that released it to every instance; short of a majority
 * of answers at the node timeout, it waits for those on their way and asks the nodes
 * whose answers were lost once more. Fewer than a majority answering at all is not
 * "taken" but {@link RedlockQuorumException}, so a caller can tell an outage from
 * contention; if those nodes are up and were only late (a loaded machine, a pause of this
 * JVM), the miss is transient ({@link #isTransient}) and a lock call with wait time left
 * tries again.
 *
 * <pre>{@code
 * List<LettuceLockBackend> nodes = ...;   // one per independent master, each on its own client
 * RedlockBackend redlock = new RedlockBackend(nodes, List.of("lock-1:6379", ...), "lock:",
 *         Duration.ofMillis(50), 0.01, null, null, null);   // no release hints: waiters only poll
 * // or, with Lettuce clients, restart protection and all: LettuceRedlockNodes.connect(...).redlock(0.01)
 * }</pre>
 */
public final class RedlockBackend implements FencingLockBackend, InspectableLockBackend, LeaseAdjustingLockBackend,
        SmartLifecycle, AutoCloseable {

    private final List<String> nodeNames;

    private final String keyPrefix;

    private final int quorum;

    /** Asks the nodes: the fan-out, the votes, the validity. */
    private final QuorumCall calls;

    /** Closed after the nodes: what they run on (their clients), or nothing. */
    private final AutoCloseable resources;

    /** Per node, whether it answers and whether its votes count. */
    private final NodeHealth health;

    /**
     * The longest lease asked for, which a restarted node must outlive before it votes.
     */
    private final LongAccumulator longestLease;

    /** Gives back the grants that come after their attempt failed or was released. */
    private final LateGrants lateGrants;

    /** Issues fencing tokens written back to a majority. */
    private final QuorumFencing fencing;

    /** Renews leases on a majority. */
    private final QuorumRenewal renewal;

    /** Sends release hints to waiters, or {@code null}: then waiters only poll. */
    private final RedlockReleaseHints hints;

    /**
     * Per node, whether its release script publishes the hint itself
     * ({@link RedlockNode#sendsReleaseHints}).
     */
    private final boolean[] sendsItsReleaseHints;

    /**
     * Whether every node can shorten a lease ({@link RedlockNode#shortensLeases}): what a
     * minimum hold needs.
     */
    private final boolean shortensLeases;

    /**
     * How contenders take turns: the arbiter, the wake-up line, the split-vote keeper.
     */
    private final ContentionPolicy contention;

    private volatile boolean running = true;

    /**
     * @param nodes one backend per independent master, each bounding its calls by the
     * node timeout and able to take part in a fencing token over several stores
     * @param nodeNames the nodes' names for messages, in the same order (their URIs
     * without passwords)
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param nodeTimeout the bound each node's calls have; a vote waits for the slowest
     * node this long
     * @param driftFactor the share of the ttl allowed for clock drift between the nodes
     * @param guards per node, whether its votes count now ({@link NodeRestartGuard});
     * {@code null} to count every node's votes
     * @param longestLease told every ttl asked for, so the guards know the longest lease;
     * may be {@code null}
     * @param resources closed after the nodes, when this backend closes (their clients);
     * may be {@code null}
     */
    public RedlockBackend(List<? extends FencingLockBackend> nodes, List<String> nodeNames, String keyPrefix,
            Duration nodeTimeout, double driftFactor, List<NodeRestartGuard> guards, LongAccumulator longestLease,
            AutoCloseable resources) {
        this(nodes, nodeNames, keyPrefix, nodeTimeout, driftFactor, guards, longestLease, resources, null);
    }

    /**
     * A Redlock whose releases send release hints on the nodes
     * ({@link LettuceRedlockNodes#redlock} makes one); the other parameters as above.
     * @param hints sends each release's hint on the nodes that deleted the lock;
     * {@code null} for none
     */
    public RedlockBackend(List<? extends FencingLockBackend> nodes, List<String> nodeNames, String keyPrefix,
            Duration nodeTimeout, double driftFactor, List<NodeRestartGuard> guards, LongAccumulator longestLease,
            AutoCloseable resources, RedlockReleaseHints hints) {
        if (nodes.size() < 3) {
            throw new IllegalArgumentException("Redlock needs at least 3 nodes, got " + nodes.size());
        }
        if (nodeNames.size() != nodes.size()) {
            throw new IllegalArgumentException(
                    "One name per node: " + nodeNames.size() + " names, " + nodes.size() + " nodes");
        }
        List<RedlockNode> adapted = new ArrayList<>(nodes.size());
        for (FencingLockBackend node : nodes) {
            adapted.add(RedlockNode.of(Objects.requireNonNull(node, "node")));
        }
        this.nodeNames = List.copyOf(nodeNames);
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        this.health = new NodeHealth(nodes.size(), guards);
        this.calls = new QuorumCall(adapted, nodeNames, nodeTimeout.toNanos(), driftFactor, health);
        this.quorum = calls.quorum();
        this.lateGrants = new LateGrants(calls);
        this.fencing = new QuorumFencing(calls, health);
        this.renewal = new QuorumRenewal(calls, health);
        this.resources = resources;
        this.longestLease = longestLease;
        this.hints = hints;
        this.contention = new ContentionPolicy(calls, health, hints);
        this.sendsItsReleaseHints = new boolean[nodes.size()];
        for (int i = 0; i < nodes.size(); i++) {
            sendsItsReleaseHints[i] = adapted.get(i).sendsReleaseHints();
        }
        this.shortensLeases = adapted.stream().allMatch(RedlockNode::shortensLeases);
    }

    /**
     * The release hints this backend's releases send, to pass to the
     * {@link io.github.distlock.core.LockWaiters} of the lock service
     * ({@link RedlockReleaseHints#deliverTo}); {@code null} if it sends none.
     */
    public RedlockReleaseHints releaseHints() {
        return hints;
    }

    /** How many nodes must agree: N/2+1. */
    public int quorum() {
        return quorum;
    }

    /** The nodes' names, in order. */
    public List<String> nodeNames() {
        return nodeNames;
    }

    @Override
    public LockKey lockKey(String name) {
        return RedisKeyNaming.lockKey(keyPrefix, name);
    }

    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
        if (longestLease != null) {
            longestLease.accumulate(ttlMillis);
        }
        long start = System.nanoTime();
        ContentionPolicy.AcquireRound round = (which, alreadyHeld, lineNode) -> acquireVotes(which, alreadyHeld, key,
                token, ttlMillis, lineNode);
        ContentionPolicy.Contention contended = contention.contended(key);
        OptionalInt arbiter = contention.arbiterFirst(contended, start);
        List<Vote<AcquireResult>> votes;
        if (arbiter.isPresent()) {
            votes = contention.askArbiterFirst(arbiter.getAsInt(), contended, start, round);
            if (Vote.refused(votes.get(arbiter.getAsInt()))) {
                // Taken, and nothing was set anywhere.
                contention.foundTaken(key, contended, true, start);
                return AcquireResult.notAcquired(0, 0);
            }
        }
        else {
            votes = round.votes(calls.all(), 0, contention.lineNodeForFullVote(contended));
        }
        votes = contention.keepSplitVote(votes, start, ttlMillis, round);
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        int granted = 0;
        int answered = 0;
        for (Vote<AcquireResult> vote : votes) {
            if (vote.answered()) {
                answered++;
                if (Vote.granted(vote)) {
                    granted++;
                }
            }
        }
        long validity = calls.validity(ttlMillis, elapsedMillis);
        if (granted >= quorum && validity > 0) {
            return AcquireResult.acquired(0, validity);
        }
        boolean tooSlow = granted >= quorum;
        // Lost the vote, ran out of validity, or too few answered: give back whatever was
        // set,
        // on the nodes that granted it and on those that did not answer, which may have
        // set the key
        // all the same. Nodes that answered "taken" hold nothing of ours.
        boolean[] mayHoldOurs = new boolean[votes.size()];
        boolean[] holdOurs = new boolean[votes.size()];
        for (int i = 0; i < votes.size(); i++) {
            mayHoldOurs[i] = !Vote.refused(votes.get(i));
            holdOurs[i] = Vote.granted(votes.get(i));
        }
        lateGrants.giveBack(mayHoldOurs, holdOurs, key, token);
        if (granted < answered) {
            contention.foundTaken(key, contended, arbiter.isPresent(), start);
        }
        if (answered < quorum) {
            throw new RedlockQuorumException(key, "acquire", answered, calls.size(), quorum, calls.failures(votes),
                    calls.missedOnlyForTime(votes));
        }
        if (tooSlow) {
            // Nobody else holds it: calling it "taken", and waiting for it, would end in
            // a message
            // blaming another owner, while every further vote is as slow as this one.
            throw new RedlockValidityException(key, granted, calls.size(), elapsedMillis, calls.drift(ttlMillis),
                    ttlMillis, Duration.ofNanos(calls.nodeTimeoutNanos()));
        }
        return AcquireResult.notAcquired(0, 0);
    }

    /**
     * One round of acquire votes from the nodes marked in {@code which} (the others'
     * votes are "not asked"), decided once {@code alreadyHeld} and the new grants make a
     * majority; held-back nodes' votes already taken out. Node {@code lineNode}, if any,
     * is asked with {@link RedlockNode#acquireOrWaitAsync}: if the lock is taken there,
     * this instance joins its wake-up line (see {@link RedlockReleaseHints}).
     */
    private List<Vote<AcquireResult>> acquireVotes(boolean[] which, int alreadyHeld, LockKey key, String token,
            long ttlMillis, OptionalInt lineNode) {
        // Decided as soon as a majority granted it: a stopped node must not hold every
        // acquisition
        // up for its node timeout. A vote that fails waits for every answer, so that what
        // was set can
        // be given back.
        VoteListener<AcquireResult> lateGrant = lateGrants.acquiring(key, token);
        return health.heldBack(calls.ask(which,
                (index, node) -> is(lineNode, index)
                        ? node.acquireOrWait(key, token, ttlMillis, hints.waiterId(), hints.lineAliveMillis())
                        : node.acquire(key, token, ttlMillis),
                (index, node) -> is(lineNode, index)
                        ? node.acquireOrWaitAsync(key, token, ttlMillis, hints.waiterId(), hints.lineAliveMillis())
                        : node.acquireAsync(key, token, ttlMillis),
                answers -> alreadyHeld + QuorumCall.count(answers, AcquireResult::acquired) >= quorum, lateGrant));
    }

    /** Whether {@code node} is the node at {@code index}. */
    private static boolean is(OptionalInt node, int index) {
        return node.isPresent() && node.getAsInt() == index;
    }

    /**
     * Draws a token on every node that still holds the lock, writes the largest back to a
     * majority, and issues it. Returns 0 if too few nodes still hold the lock to issue a
     * token (it is lost).
     */
    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        return fencing.issue(key, token, ttlMillis);
    }

    @Override
    public boolean release(LockKey key, String token) {
        VoteListener<Boolean> lateGrant = lateGrants.releasing(key, token);
        // Released once a majority deleted it (no majority can hold it any more) and the
        // arbiter answered; the other deletes go on in the background. The arbiter is
        // waited for because contenders ask it alone first: were its delete still on its
        // way, an instance told of this release (by us, or by a hint from another node)
        // would find the lock "taken" there, and a tryLock without wait time would fail
        // on a free lock. Not an arbiter that looks stopped, though (a command of ours
        // pending there since before this release, and no answer since): a stopped node
        // must not hold every release up for its node timeout.
        long started = System.nanoTime();
        // The arbiter's release script sends the release hint as it deletes (see
        // RedlockReleaseHints), to the instance at the head of the lock's wake-up line
        // there, or to every instance: every waiter subscribes to every node, so one hint
        // reaches them all, and the same one from every node cost each waiting JVM five
        // messages to read per release. If the arbiter did not release it, the nodes that
        // did send it below, to every instance.
        OptionalInt arbiter = contention.arbiter();
        String hint = hints == null ? null : hints.newHint(key);
        OptionalInt hintSender = hint == null ? OptionalInt.empty() : arbiter;
        // The arbiter's answer may come after the majority's (if it looked
        // stopped); whether it sent the hint is known only then (see
        // hintIfTheArbiterDidNot). Whichever of the two comes second puts its part
        // here first.
        AtomicReference<Object> arbiterLate = new AtomicReference<>();
        VoteListener<Boolean> everyAnswer = (index, vote, late) -> {
            lateGrant.answered(index, vote, late);
            if (late && is(hintSender, index) && arbiterLate.compareAndExchange(null, vote) instanceof boolean[] on) {
                hintIfTheArbiterDidNot(vote, on, hint);
            }
        };
        RedlockNode.ReleaseHint releaseHint = hint == null ? null
                : new RedlockNode.ReleaseHint(hints.channel(), hint, hintSender.isPresent());
        List<Vote<Boolean>> votes = calls.ask(calls.all(),
                (index, node) -> sendsHint(index, releaseHint, hintSender)
                        ? node.releaseWithHint(key, token, releaseHint) : node.release(key, token),
                (index, node) -> sendsHint(index, releaseHint, hintSender)
                        ? node.releaseWithHintAsync(key, token, releaseHint) : node.releaseAsync(key, token),
                answers -> QuorumCall.count(answers, Boolean::booleanValue) >= quorum
                        && (arbiter.isEmpty() || !Ballot.isPending(answers.get(arbiter.getAsInt()))
                                || health.responsiveness(arbiter.getAsInt()).silentSince(started)),
                everyAnswer, quorum, null);
        // A release has no next round of its own above it: answers still on their way
        // when a majority has not answered were waited for above, within their commands'
        // own bounds, and nodes that are up but whose answers were lost are asked once
        // more.
        if (QuorumCall.count(votes, Boolean::booleanValue) < quorum && QuorumCall.count(votes, answer -> true) < quorum
                && calls.missedOnlyForTime(votes)) {
            votes = releaseAgainWhereUnanswered(votes, key, token, releaseHint, hintSender);
        }
        int released = 0;
        int answered = 0;
        boolean[] releasedOn = new boolean[votes.size()];
        for (int i = 0; i < votes.size(); i++) {
            Vote<Boolean> vote = votes.get(i);
            if (vote.answered()) {
                answered++;
                if (vote.says(Boolean::booleanValue)) {
                    released++;
                    releasedOn[i] = true;
                }
            }
        }
        contention.released(key);
        if (hints != null && released > 0) {
            // Wherever the lock is gone now; a waiter woken by a node of a minority still
            // needs a majority.
            boolean[] hintedBy = new boolean[votes.size()];
            if (hintSender.isPresent()) {
                int sender = hintSender.getAsInt();
                if (sendsItsReleaseHints[sender] && Ballot.isPending(votes.get(sender))) {
                    // Its answer is still on its way (it looked stopped),
                    // usually with its own hint: the nodes that released it
                    // send it only if it turns out the arbiter did not. Sending from them
                    // now, each time the arbiter answered
                    // after the majority, woke every instance instead of the one
                    // at the head of the arbiter's line.
                    Arrays.fill(hintedBy, true);
                    if (arbiterLate.compareAndExchange(null, releasedOn) instanceof Vote<?> vote) {
                        hintIfTheArbiterDidNot(vote, releasedOn, hint);
                    }
                }
                else if (releasedOn[sender] && sendsItsReleaseHints[sender]) {
                    Arrays.fill(hintedBy, true);
                }
            }
            else {
                hintedBy = sendsItsReleaseHints;
            }
            hints.released(releasedOn, hintedBy, key, hint, released >= quorum);
        }
        if (released >= quorum) {
            return true;
        }
        if (answered < quorum) {
            // Unknown: a majority may still hold it. The lock service retries in the
            // background.
            throw new RedlockQuorumException(key, "release", answered, calls.size(), quorum, calls.failures(votes));
        }
        return false;
    }

    /**
     * A second round of a release to the nodes whose answer to the first did not come,
     * from nodes that are up (see {@link QuorumCall#missedOnlyForTime}); their first
     * commands have ended by now. Where the first was sent, any answer counts as
     * released, as for a command the client re-sent: the first delivery, whose answer was
     * lost, may have deleted our key. Returns the first round's votes with these in place
     * of the missing ones.
     */
    private List<Vote<Boolean>> releaseAgainWhereUnanswered(List<Vote<Boolean>> first, LockKey key, String token,
            RedlockNode.ReleaseHint releaseHint, OptionalInt hintSender) {
        boolean[] unanswered = new boolean[first.size()];
        boolean[] sent = new boolean[first.size()];
        for (int i = 0; i < first.size(); i++) {
            unanswered[i] = !first.get(i).answered();
            sent[i] = unanswered[i] && first.get(i) != Vote.Absent.NOT_ANSWERING.<Boolean>vote();
        }
        int releasedBefore = QuorumCall.count(first, Boolean::booleanValue);
        List<Vote<Boolean>> again = calls.ask(unanswered,
                (index, node) -> sendsHint(index, releaseHint, hintSender)
                        ? node.releaseWithHint(key, token, releaseHint) : node.release(key, token),
                (index, node) -> sendsHint(index, releaseHint, hintSender)
                        ? node.releaseWithHintAsync(key, token, releaseHint) : node.releaseAsync(key, token),
                answers -> releasedBefore + releasedAgain(answers, sent) >= quorum, null, quorum, null);
        List<Vote<Boolean>> merged = new ArrayList<>(first);
        for (int i = 0; i < first.size(); i++) {
            Vote<Boolean> vote = again.get(i);
            if (unanswered[i]) {
                boolean sentBefore = sent[i];
                merged.set(i,
                        vote.answered() ? new Vote.Answer<>(vote.says(Boolean::booleanValue) || sentBefore) : vote);
            }
        }
        return merged;
    }

    /**
     * How many of a second round's answers count as released (see
     * {@link #releaseAgainWhereUnanswered}).
     */
    private static int releasedAgain(List<Vote<Boolean>> answers, boolean[] sentBefore) {
        int released = 0;
        for (int i = 0; i < answers.size(); i++) {
            Vote<Boolean> vote = answers.get(i);
            released += vote.answered() && (vote.says(Boolean::booleanValue) || sentBefore[i]) ? 1 : 0;
        }
        return released;
    }

    /**
     * An acquire that found fewer than a majority answering, having given back what it
     * may have set (see {@link #tryAcquire}), is transient if the nodes that did not
     * answer are up and were only late: the next round, with a token of its own, may well
     * pass. Votes are never carried over from one round to the next.
     */
    @Override
    public boolean isTransient(LockBackendException failure) {
        return failure instanceof RedlockQuorumException quorumMissed && quorumMissed.late();
    }

    /**
     * The arbiter's answer to a release came after the majority's: if it did not delete
     * the lock (or gave no answer), it sent no hint, so the nodes that did release it
     * send it.
     */
    private void hintIfTheArbiterDidNot(Vote<?> arbiterVote, boolean[] releasedOn, String hint) {
        if (!arbiterVote.says(Boolean.TRUE::equals)) {
            hints.publish(releasedOn, hint);
        }
    }

    /**
     * Whether {@code node}'s release sends the release hint: every node's if no arbiter
     * qualifies, the arbiter's alone otherwise; none without a hint.
     */
    private static boolean sendsHint(int node, RedlockNode.ReleaseHint releaseHint, OptionalInt hintSender) {
        return releaseHint != null && (hintSender.isEmpty() || hintSender.getAsInt() == node);
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        renewal.renew(renewals, outcomes);
    }

    /**
     * Only if every node can shorten a lease: a Redis node can, a custom node only if it
     * is a {@link LeaseAdjustingLockBackend}. Otherwise a minimum hold could not be kept
     * on the nodes that cannot, and the lock service refuses it.
     */
    @Override
    public boolean supportsLeaseAdjustment() {
        return shortensLeases;
    }

    /**
     * Cuts the lease to {@code remainingMillis} on every node that still holds our token
     * ({@code release_after.lua} on a Redis node): shortened once a majority answered
     * that it held it, as a release is released once a majority deleted it. A node that
     * missed it keeps its own lease, which was never longer than the ttl: as for a
     * release that reached only a majority. No release hint goes out: the lock is not
     * free yet, and waiters find it free by polling once it expires. With nothing left,
     * {@link #release}.
     * @throws RedlockQuorumException if fewer than a majority answered; the lease then
     * runs out by itself
     */
    @Override
    public boolean releaseAfter(LockKey key, String token, long remainingMillis) {
        if (remainingMillis <= 0) {
            return release(key, token);
        }
        if (!shortensLeases) {
            throw new UnsupportedOperationException("This Redlock cannot hold a lock for a minimum time: not every "
                    + "node can shorten a lease (each must be a Redis node or a LeaseAdjustingLockBackend)");
        }
        List<Vote<Boolean>> votes = calls.ask(calls.all(),
                (index, node) -> node.releaseAfter(key, token, remainingMillis), null,
                answers -> QuorumCall.count(answers, Boolean::booleanValue) >= quorum, null, quorum, null);
        int shortened = QuorumCall.count(votes, Boolean::booleanValue);
        if (shortened >= quorum) {
            return true;
        }
        int answered = QuorumCall.count(votes, answer -> true);
        if (answered < quorum) {
            throw new RedlockQuorumException(key, "release", answered, calls.size(), quorum, calls.failures(votes));
        }
        return false;
    }

    /**
     * A renewal of this one lease to {@code ttlMillis}, over a majority as the watchdog's
     * are ({@link QuorumRenewal}): set once a majority set it within the round's
     * validity, which {@link #renewedValidityMillis} then gives.
     * @throws LockBackendException if neither a majority set it nor so many said "not
     * ours" that no majority can hold it
     */
    @Override
    public boolean extend(LockKey key, String token, long ttlMillis) {
        LockBackend.RenewalOutcome[] outcome = new LockBackend.RenewalOutcome[1];
        renewal.renew(List.of(new LeaseRenewal(key, token, ttlMillis)), (index, result) -> outcome[0] = result);
        if (outcome[0] == LockBackend.RenewalOutcome.RENEWED) {
            return true;
        }
        if (outcome[0] == LockBackend.RenewalOutcome.LOST) {
            return false;
        }
        throw new LockBackendException(key.name(),
                "Could not extend lock " + key.printableName() + ": fewer than " + quorum + " of " + calls.size()
                        + " Redlock nodes set its lease in time, and too few said it is "
                        + "gone. Its lease is counted as the shorter of the old and the new one.",
                null);
    }

    /**
     * A renewed lease is valid for its ttl less the drift allowance, from the round's
     * start.
     */
    @Override
    public long renewedValidityMillis(long ttlMillis) {
        return Math.max(0, ttlMillis - calls.drift(ttlMillis));
    }

    /**
     * Closes every node, the fan-out threads and the nodes' resources; only the first
     * call does.
     */
    @Override
    public void close() {
        synchronized (calls) {
            if (calls.isShutDown()) {
                return;
            }
            running = false;
            calls.shutDown();
        }
        List<AutoCloseable> closeables = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            closeables.add(calls.node(i));
        }
        if (resources != null) {
            closeables.add(resources);
        }
        for (AutoCloseable closeable : closeables) {
            try {
                closeable.close();
            }
            catch (Exception ex) {
                // Closing the rest matters more than one failure to close.
            }
        }
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        close();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Before the clients the nodes run on are shut down. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 1;
    }

    // The Actuator's view (InspectableLockBackend): read-only, over every node at once.

    /**
     * Each node's state of the lock, and a majority summary: held if a majority holds the
     * key, for the lease that a majority still has; the fencing counter that a majority
     * has reached, which is the last token issued (an issued token was written back to a
     * majority first). A node that did not answer, or whose votes are held back, is
     * listed with why, and counts as not holding it.
     */
    @Override
    public LockState inspect(LockKey key) {
        // Every node's answer is wanted here: this is a report, not a vote.
        List<Vote<LockState>> answers = calls.ask((index, node) -> node.inspect(key), votesSoFar -> false);
        List<NodeLockState> perNode = new ArrayList<>(answers.size());
        List<Long> pttls = new ArrayList<>();
        List<Long> counters = new ArrayList<>();
        long queued = 0;
        for (int i = 0; i < answers.size(); i++) {
            if (!(answers.get(i) instanceof Vote.Answer<LockState> answer)) {
                perNode.add(new NodeLockState(nodeNames.get(i), null, Vote.reason(answers.get(i))));
                continue;
            }
            LockState state = answer.value();
            perNode.add(new NodeLockState(nodeNames.get(i), state,
                    health.votes(i) ? null : Vote.Absent.HELD_BACK.reason()));
            if (state.held()) {
                // A key without expiry (a foreign client's) outlasts any lease.
                pttls.add(state.leaseLeftMillis() == LockState.NO_EXPIRY ? Long.MAX_VALUE : state.leaseLeftMillis());
            }
            counters.add(state.lastFencingToken());
            queued = Math.max(queued, state.queueLength());
        }
        pttls.sort(Comparator.reverseOrder());
        counters.sort(Comparator.reverseOrder());
        boolean held = pttls.size() >= quorum;
        long leaseLeft = !held ? 0
                : pttls.get(quorum - 1) == Long.MAX_VALUE ? LockState.NO_EXPIRY : pttls.get(quorum - 1);
        long fence = counters.size() >= quorum ? counters.get(quorum - 1) : 0;
        return new LockState(held, leaseLeft, queued, fence, perNode);
    }

    /**
     * Pings every node at once; a node whose votes are held back answers, but does not
     * count.
     */
    @Override
    public Reachability ping() {
        long start = System.nanoTime();
        List<Vote<Reachability>> answers = calls.ask((index, node) -> node.ping(), votesSoFar -> false);
        List<NodeReachability> perNode = new ArrayList<>(answers.size());
        for (int i = 0; i < answers.size(); i++) {
            String name = nodeNames.get(i);
            if (!(answers.get(i) instanceof Vote.Answer<Reachability> answer)) {
                perNode.add(new NodeReachability(name, false, Duration.ofNanos(System.nanoTime() - start),
                        Vote.reason(answers.get(i))));
                continue;
            }
            NodeReachability node = answer.value().nodes().get(0);
            if (node.reachable() && !health.votes(i)) {
                perNode.add(new NodeReachability(name, false, node.latency(),
                        "answers, but " + Vote.Absent.HELD_BACK.reason()));
            }
            else {
                perNode.add(new NodeReachability(name, node.reachable(), node.latency(), node.error()));
            }
        }
        return new Reachability(perNode, quorum);
    }

}
