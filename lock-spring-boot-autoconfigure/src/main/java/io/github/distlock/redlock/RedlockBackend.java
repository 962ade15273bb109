package io.github.distlock.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.locks.LockSupport;

import org.springframework.context.SmartLifecycle;

import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.RedisKeyNaming;

/**
 * Redlock: one lock over N independent Redis masters, held while a majority of them holds it.
 *
 * <p>Each node is a single-Redis {@link LockBackend} of its own (in practice a
 * {@link io.github.distlock.redis.RedisLockBackend} on its own client), so every node runs the same
 * commands and scripts as a single Redis does, with the same wire format. On top of them:
 * <ul>
 * <li><b>Acquire</b> asks every node at once ({@code SET NX PX GET}), each bounded by the node
 * timeout. It succeeds as soon as N/2+1 nodes granted it, if the lock is still valid then:
 * validity = ttl − time the vote took − (ttl × drift factor + 2 ms), on the monotonic clock. It
 * does not wait for the other nodes, so a stopped node costs nothing while a majority answers.
 * Otherwise it releases on every node, those that did not answer included (a no-show may have set
 * the key after all), and reports the lock taken; the lock service retries after a random delay
 * within the wait time. A majority that granted it too slowly for the ttl is not "taken" but
 * {@link RedlockValidityException}: the ttl is too short for the time a vote takes.</li>
 * <li><b>Renew</b> extends the lease on every node at once. A lease stays held only while a
 * majority renewed it within the round's validity; once so many nodes answered "not ours" that no
 * majority is left, it is lost.</li>
 * <li><b>Release</b> runs on every node at once, and reports released as soon as a majority
 * released; the other nodes' deletes finish in the background. The arbiter node publishes a
 * release hint ({@link RedlockReleaseHints}) from the same script as it deletes the lock, to the
 * instance at the head of the lock's wake-up line there (the instances whose contended attempts
 * found it taken, by arrival), or to every instance if nobody alive is in line (the nodes that
 * released it announce it to every instance, if the arbiter did not).</li>
 * </ul>
 *
 * <p>Fewer than a majority answering at all is not "taken" but a backend failure:
 * {@link RedlockQuorumException}, naming how many nodes answered, so a caller can tell an outage
 * from contention.
 *
 * <p><b>Restarted nodes.</b> A node that restarted empty has forgotten the locks it granted. With
 * {@link NodeRestartGuard guards}, its answers do not count until it has been up longer than the
 * longest lease the application uses (the delayed restart of the Redlock description, enforced by
 * the client).
 *
 * <p><b>Fencing tokens over a quorum</b> ({@link #issueFencingToken}, on demand as on a single
 * node). The largest of the tokens drawn on the nodes that granted the lock is not enough: holder
 * A's largest may come from a node that holder B's majority leaves out, and B's largest can then be
 * smaller. So a token is drawn on every node that still holds the lock, the largest is written back
 * to a majority (conditioned on the lock still being ours there), and only then is it issued. Any
 * later holder's majority shares a node with that majority and draws a larger token there. This
 * assumes a node's counter survives until the next holder draws on it (the counter lives a day; the
 * restart rule keeps a node that forgot it from voting for one longest lease) or, failing that, that
 * the nodes' clocks agree to within the time between two holders (a token is never below the
 * server's time in microseconds, see fencing.lua).
 *
 * <p>No wait queue: a waiter polls ({@code retry-delay}), and a release hint wakes the
 * longest-waiting thread of each JVM early. A key found taken is contended for a second: its
 * attempts ask the arbiter node alone first and the others only if it granted ({@link #askArbiterFirst}),
 * so that the waiters one release woke in several JVMs don't split the vote.
 *
 * <pre>{@code
 * List<RedisLockBackend> nodes = ...;   // one per independent master, each on its own client
 * RedlockBackend redlock = new RedlockBackend(nodes, List.of("lock-1:6379", ...), "lock:",
 *         Duration.ofMillis(50), 0.01, null, null, null);   // no release hints: waiters only poll
 * // or, with Lettuce clients, restart protection and all: LettuceRedlockNodes.connect(...).redlock(0.01)
 * }</pre>
 */
public final class RedlockBackend implements FencingLockBackend, InspectableLockBackend, SmartLifecycle, AutoCloseable {

    /** How many more rounds the winner of a split vote asks the nodes it lacks (see {@link #wonSplitVote}). */
    private static final int SPLIT_VOTE_RETRIES = 2;
    private static final long MIN_SPLIT_VOTE_PAUSE_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
    private static final long MAX_SPLIT_VOTE_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    /** How long a key found taken counts as contended: its attempts ask the arbiter node first. */
    private static final long CONTENDED_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * How often a contended key is still put to every node: the arbiter alone can't tell a lock held
     * by a majority from a leftover on that node only (a release or give-back still on its way, a
     * client that died mid-vote), which would otherwise stall the key until the leftover expires.
     */
    private static final long FULL_VOTE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /**
     * How long the thread that released a contended key waits before it asks for it again: the
     * waiters its release woke in other JVMs get to the arbiter first, instead of the releaser winning
     * every time it locks again at once (it hears of its own release before anyone).
     */
    private static final long YIELD_NANOS = TimeUnit.MICROSECONDS.toNanos(500);
    /** Bound of {@link #contention}; past it, entries older than {@link #CONTENDED_NANOS} go. */
    private static final int MAX_CONTENDED_KEYS = 4096;

    private final List<String> nodeNames;
    private final String keyPrefix;
    private final int quorum;
    /** Asks the nodes: the fan-out, the votes, the validity. */
    private final QuorumCall calls;
    /** Closed after the nodes: what they run on (their clients), or nothing. */
    private final AutoCloseable resources;
    /** Per node, whether it answers and whether its votes count. */
    private final NodeHealth health;
    /** The longest lease asked for, which a restarted node must outlive before it votes. */
    private final LongAccumulator longestLease;
    /** Gives back the grants that come after their attempt failed or was released. */
    private final LateGrants lateGrants;
    /** Announces releases to waiters, or {@code null}: then waiters only poll. */
    private final RedlockReleaseHints hints;
    /** Per node, whether its release script publishes the hint itself ({@link #releaseAndHint}). */
    private final boolean[] announcesItsReleases;
    /** By lock key: when attempts of this backend found it taken (see {@link #askArbiterFirst}). */
    private final ConcurrentHashMap<String, Contention> contention = new ConcurrentHashMap<>();
    private volatile boolean running = true;

    /**
     * @param nodes one backend per independent master, each bounding its calls by the node timeout and
     *        able to take part in a fencing token over several stores
     * @param nodeNames the nodes' names for messages, in the same order (their URIs without passwords)
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param nodeTimeout the bound each node's calls have; a vote waits for the slowest node this long
     * @param driftFactor the share of the ttl allowed for clock drift between the nodes
     * @param guards per node, whether its votes count now ({@link NodeRestartGuard}); {@code null}
     *        to count every node's votes
     * @param longestLease told every ttl asked for, so the guards know the longest lease; may be
     *        {@code null}
     * @param resources closed after the nodes, when this backend closes (their clients); may be
     *        {@code null}
     */
    public RedlockBackend(List<? extends FencingLockBackend> nodes, List<String> nodeNames, String keyPrefix,
            Duration nodeTimeout, double driftFactor, List<NodeRestartGuard> guards, LongAccumulator longestLease,
            AutoCloseable resources) {
        this(nodes, nodeNames, keyPrefix, nodeTimeout, driftFactor, guards, longestLease, resources, null);
    }

    /**
     * A Redlock whose releases announce themselves on the nodes ({@link LettuceRedlockNodes#redlock}
     * makes one); the other parameters as above.
     *
     * @param hints announces each release on the nodes that deleted the lock; {@code null} for none
     */
    public RedlockBackend(List<? extends FencingLockBackend> nodes, List<String> nodeNames, String keyPrefix,
            Duration nodeTimeout, double driftFactor, List<NodeRestartGuard> guards, LongAccumulator longestLease,
            AutoCloseable resources, RedlockReleaseHints hints) {
        if (nodes.size() < 3) {
            throw new IllegalArgumentException("Redlock needs at least 3 nodes, got " + nodes.size());
        }
        if (nodeNames.size() != nodes.size()) {
            throw new IllegalArgumentException("One name per node: " + nodeNames.size() + " names, " + nodes.size()
                    + " nodes");
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
        this.resources = resources;
        this.longestLease = longestLease;
        this.hints = hints;
        this.announcesItsReleases = new boolean[nodes.size()];
        for (int i = 0; i < nodes.size(); i++) {
            announcesItsReleases[i] = adapted.get(i).announcesReleases();
        }
    }

    /**
     * The release hints this backend's releases send, to pass to the {@link io.github.distlock.core.LockWaiters}
     * of the lock service ({@link RedlockReleaseHints#deliverTo}); {@code null} if it sends none.
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
        Contention contended = contention.get(key.redisKey());
        int arbiter = contended != null && contended.askArbiterFirst(start) ? arbiter() : -1;
        List<Vote<AcquireResult>> votes;
        if (arbiter >= 0) {
            long yieldFor = contended.releasedAt + YIELD_NANOS - start;
            if (yieldFor > 0 && contended.releasedBy == Thread.currentThread()) {
                LockSupport.parkNanos(yieldFor);
            }
            votes = askArbiterFirst(arbiter, key, token, ttlMillis);
            if (votes == null) {
                markContended(key, new Contention(System.nanoTime(), contended.fullVoteAt));
                return AcquireResult.notAcquired(0, 0);
            }
        }
        else {
            votes = acquireVotes(calls.all(), 0, key, token, ttlMillis, contended != null ? lineNode(arbiter()) : -1);
        }
        for (int retry = 0; retry < SPLIT_VOTE_RETRIES && wonSplitVote(votes)
                && System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(ttlMillis) / 2; retry++) {
            // Nobody has a majority, and we hold the first node that answered: the callers that split
            // the vote with us see the same and give theirs back, so we keep ours and ask the other
            // nodes again once their releases have landed, instead of everyone backing off at random
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
            List<Vote<AcquireResult>> again = acquireVotes(missing, held, key, token, ttlMillis);
            List<Vote<AcquireResult>> merged = new ArrayList<>(votes.size());
            for (int i = 0; i < votes.size(); i++) {
                merged.add(missing[i] ? again.get(i) : votes.get(i));
            }
            votes = merged;
        }
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
        // Lost the vote, ran out of validity, or too few answered: give back whatever was set,
        // on the nodes that granted it and on those that did not answer, which may have set the key
        // all the same. Nodes that answered "taken" hold nothing of ours.
        boolean[] mayHoldOurs = new boolean[votes.size()];
        for (int i = 0; i < votes.size(); i++) {
            mayHoldOurs[i] = !Vote.refused(votes.get(i));
        }
        lateGrants.giveBack(mayHoldOurs, key, token);
        if (granted < answered) {
            long now = System.nanoTime();
            markContended(key, new Contention(now, arbiter >= 0 ? contended.fullVoteAt : start));
        }
        if (answered < quorum) {
            throw new RedlockQuorumException(key, "acquire", answered, calls.size(), quorum, calls.failures(votes));
        }
        if (tooSlow) {
            // Nobody else holds it: calling it "taken", and waiting for it, would end in a message
            // blaming another owner, while every further vote is as slow as this one.
            throw new RedlockValidityException(key, granted, calls.size(), elapsedMillis, calls.drift(ttlMillis),
                    ttlMillis, Duration.ofNanos(calls.nodeTimeoutNanos()));
        }
        return AcquireResult.notAcquired(0, 0);
    }

    /**
     * One round of acquire votes from the nodes marked in {@code which} (the others' votes are "not
     * asked"), decided once {@code alreadyHeld} and the new grants make a majority; held-back nodes'
     * votes already taken out.
     */
    private List<Vote<AcquireResult>> acquireVotes(boolean[] which, int alreadyHeld, LockKey key, String token,
            long ttlMillis) {
        return acquireVotes(which, alreadyHeld, key, token, ttlMillis, -1);
    }

    /**
     * {@link #acquireVotes(boolean[], int, LockKey, String, long)}, where node {@code lineNode} (-1:
     * none) is asked with {@link RedlockNode#acquireOrWaitAsync}: if the lock is taken there, this
     * instance joins its wake-up line (see {@link RedlockReleaseHints}).
     */
    private List<Vote<AcquireResult>> acquireVotes(boolean[] which, int alreadyHeld, LockKey key, String token,
            long ttlMillis, int lineNode) {
        // Decided as soon as a majority granted it: a stopped node must not hold every acquisition
        // up for its node timeout. A vote that fails waits for every answer, so that what was set can
        // be given back.
        VoteListener<AcquireResult> lateGrant = lateGrants.acquiring(key, token);
        return health.heldBack(calls.ask(which, (index, node) -> index == lineNode
                ? node.acquireOrWait(key, token, ttlMillis, hints.waiterId(), hints.lineAliveMillis())
                : node.acquire(key, token, ttlMillis),
                (index, node) -> index == lineNode
                        ? node.acquireOrWaitAsync(key, token, ttlMillis, hints.waiterId(), hints.lineAliveMillis())
                        : node.acquireAsync(key, token, ttlMillis),
                answers -> alreadyHeld + QuorumCall.count(answers, AcquireResult::acquired) >= quorum,
                lateGrant));
    }

    /**
     * The acquisition of a contended key: asks the arbiter node alone, and the others only if it
     * granted the lock (or did not answer). Every contender woken by the same release would otherwise
     * ask all nodes at once and split the vote, each then giving back what it got: on a few cores
     * shared with the nodes, most of a contended Redlock's work. The arbiter grants one of them, and
     * the others stop after one command that set nothing. Safety is the same either way: the lock is
     * ours only with a majority, the arbiter's vote among them. Uncontended keys keep the single
     * round of the fan-out.
     *
     * @return the votes of every node, or {@code null} if the arbiter said the lock is taken (nothing
     *         was set anywhere)
     */
    private List<Vote<AcquireResult>> askArbiterFirst(int arbiter, LockKey key, String token, long ttlMillis) {
        boolean[] first = calls.only(arbiter);
        Vote<AcquireResult> arbiterVote = acquireVotes(first, 0, key, token, ttlMillis, lineNode(arbiter)).get(arbiter);
        if (Vote.refused(arbiterVote)) {
            return null;
        }
        boolean[] others = calls.all();
        others[arbiter] = false;
        List<Vote<AcquireResult>> votes = new ArrayList<>(
                acquireVotes(others, Vote.granted(arbiterVote) ? 1 : 0, key, token, ttlMillis));
        votes.set(arbiter, arbiterVote);
        return votes;
    }

    /**
     * The node contenders ask first: the first in order that answers and whose votes count. All
     * contenders pick the same one while they see the nodes alike (the one {@link #wonSplitVote}
     * favours too); if they don't, only how fast it goes suffers. -1 if none qualifies.
     */
    private int arbiter() {
        long now = System.nanoTime();
        for (int i = 0; i < calls.size(); i++) {
            if (health.isHealthy(i, now, calls.nodeTimeoutNanos())) {
                return i;
            }
        }
        return -1;
    }

    /**
     * {@code arbiter} if this instance can wait in line there: a node whose hints, those for this
     * instance included, reach it now (a node without wake-up lines only takes the lock); -1 otherwise.
     */
    private int lineNode(int arbiter) {
        return arbiter >= 0 && hints != null && hints.isDelivering(arbiter) ? arbiter : -1;
    }

    private void markContended(LockKey key, Contention found) {
        if (contention.size() >= MAX_CONTENDED_KEYS) {
            contention.values().removeIf(entry -> found.takenAt - entry.takenAt >= CONTENDED_NANOS);
        }
        contention.put(key.redisKey(), found);
    }

    /**
     * A key this backend found taken.
     *
     * @param takenAt when an attempt last found it taken
     * @param fullVoteAt when every node was last asked for it
     * @param releasedAt when a thread of this backend last released it since, or 0
     * @param releasedBy that thread, or {@code null}
     */
    private record Contention(long takenAt, long fullVoteAt, long releasedAt, Thread releasedBy) {

        Contention(long takenAt, long fullVoteAt) {
            this(takenAt, fullVoteAt, 0, null);
        }

        boolean askArbiterFirst(long now) {
            return now - takenAt < CONTENDED_NANOS && now - fullVoteAt < FULL_VOTE_EVERY_NANOS;
        }
    }

    /**
     * Whether a vote split between contenders and we are the one to keep our grants: no majority for
     * us, a majority of nodes answered, fewer than a majority are held by others (so nobody else can
     * have won among them), and the first node that answered is ours. Every contender that saw the
     * same answers draws the same conclusion, as only one of them can hold that node; one that saw
     * different answers (a node answered some and not others) may keep its grants too, and then
     * both give up after {@link #SPLIT_VOTE_RETRIES} rounds. Either way only liveness is at stake:
     * the lock is ours only with a majority.
     */
    private static boolean wonSplitVote(List<Vote<AcquireResult>> votes) {
        int granted = 0;
        int taken = 0;
        int firstAnswered = -1;
        for (int i = 0; i < votes.size(); i++) {
            Vote<AcquireResult> vote = votes.get(i);
            if (!vote.answered()) {
                continue;
            }
            if (firstAnswered < 0) {
                firstAnswered = i;
            }
            if (Vote.granted(vote)) {
                granted++;
            }
            else {
                taken++;
            }
        }
        int quorum = votes.size() / 2 + 1;
        return granted > 0 && granted < quorum && granted + taken >= quorum && taken < quorum
                && Vote.granted(votes.get(firstAnswered));
    }

    /**
     * Draws a token on every node that still holds the lock, writes the largest back to a majority,
     * and issues it. Returns 0 if too few nodes still hold the lock to issue a token (it is lost).
     */
    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        // Any majority of draws will do: it meets the majority the previous token was written to.
        List<Vote<Long>> drawn = health.heldBack(calls.ask(
                (index, node) -> node.drawFencingToken(key, token, ttlMillis),
                answers -> QuorumCall.count(answers, drawnToken -> drawnToken > 0) >= quorum));
        long largest = 0;
        int holding = 0;
        int answered = 0;
        for (Vote<Long> vote : drawn) {
            if (vote instanceof Vote.Answer<Long> answer) {
                answered++;
                if (answer.value() > 0) {
                    holding++;
                    largest = Math.max(largest, answer.value());
                }
            }
        }
        if (holding < quorum) {
            if (answered - holding > calls.size() - quorum) {
                return 0; // so many nodes no longer hold it that no majority can
            }
            throw new RedlockQuorumException(key, "fencing token", answered, calls.size(), quorum,
                    calls.failures(drawn));
        }
        long fence = largest;
        List<Vote<Boolean>> raised = health.heldBack(calls.ask(
                (index, node) -> node.raiseFencingCounter(key, token, fence, ttlMillis),
                answers -> QuorumCall.count(answers, Boolean::booleanValue) >= quorum));
        int written = 0;
        answered = 0;
        for (Vote<Boolean> vote : raised) {
            if (vote.answered()) {
                answered++;
                if (vote.says(Boolean::booleanValue)) {
                    written++;
                }
            }
        }
        if (written >= quorum) {
            return fence;
        }
        if (answered - written > calls.size() - quorum) {
            return 0;
        }
        throw new RedlockQuorumException(key, "fencing token", answered, calls.size(), quorum, calls.failures(raised));
    }

    @Override
    public boolean release(LockKey key, String token) {
        VoteListener<Boolean> lateGrant = lateGrants.releasing(key, token);
        // Released once a majority deleted it: no majority can hold it any more. The others'
        // deletes go on in the background.
        // The arbiter's release script announces the release as it deletes (see RedlockReleaseHints),
        // to the instance at the head of the lock's wake-up line there, or to every instance: every
        // waiter subscribes to every node, so one announcement reaches them all, and the same one
        // from every node cost each waiting JVM five messages to read per release. If the arbiter
        // did not release it, the nodes that did announce it below, to every instance.
        String hint = hints == null ? null : hints.newHint(key);
        int announcer = hint == null ? -1 : arbiter();
        // The arbiter's answer may come after the majority's; whether it announced is known only then
        // (see announceIfTheArbiterDidNot). Whichever of the two comes second puts its part here first.
        AtomicReference<Object> arbiterLate = new AtomicReference<>();
        VoteListener<Boolean> everyAnswer = (index, vote, late) -> {
            lateGrant.answered(index, vote, late);
            if (late && index == announcer && arbiterLate.compareAndExchange(null, vote) instanceof boolean[] on) {
                announceIfTheArbiterDidNot(vote, on, hint);
            }
        };
        RedlockNode.Announcement announcement = hint == null ? null
                : new RedlockNode.Announcement(hints.channel(), hint, announcer >= 0);
        List<Vote<Boolean>> votes = calls.ask(calls.all(), (index, node) -> announces(index, announcement, announcer)
                ? node.releaseAndAnnounce(key, token, announcement) : node.release(key, token),
                (index, node) -> announces(index, announcement, announcer)
                        ? node.releaseAndAnnounceAsync(key, token, announcement) : node.releaseAsync(key, token),
                answers -> QuorumCall.count(answers, Boolean::booleanValue) >= quorum, everyAnswer);
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
        Contention contended = contention.get(key.redisKey());
        if (contended != null) {
            // See YIELD_NANOS.
            contention.put(key.redisKey(), new Contention(contended.takenAt, contended.fullVoteAt, System.nanoTime(),
                    Thread.currentThread()));
        }
        if (hints != null && released > 0) {
            // Wherever the lock is gone now; a waiter woken by a node of a minority still needs a majority.
            boolean[] announcedBy = new boolean[votes.size()];
            if (announcer >= 0 && announcesItsReleases[announcer] && Ballot.isPending(votes.get(announcer))) {
                // Its answer is on its way, usually with its own announcement: the nodes that released
                // it announce it only if it turns out the arbiter did not. Announcing from them now, each
                // time the arbiter answered after the majority, woke every instance instead of the one at
                // the head of the arbiter's line.
                Arrays.fill(announcedBy, true);
                if (arbiterLate.compareAndExchange(null, releasedOn) instanceof Vote<?> vote) {
                    announceIfTheArbiterDidNot(vote, releasedOn, hint);
                }
            }
            else if (announcer >= 0 && releasedOn[announcer] && announcesItsReleases[announcer]) {
                Arrays.fill(announcedBy, true);
            }
            else if (announcer < 0) {
                announcedBy = announcesItsReleases;
            }
            hints.released(releasedOn, announcedBy, key, hint, released >= quorum);
        }
        if (released >= quorum) {
            return true;
        }
        if (answered < quorum) {
            // Unknown: a majority may still hold it. The lock service retries in the background.
            throw new RedlockQuorumException(key, "release", answered, calls.size(), quorum, calls.failures(votes));
        }
        return false;
    }

    /**
     * The arbiter's answer to a release came after the majority's: if it did not delete the lock (or
     * gave no answer), it announced nothing, so the nodes that did release it announce it.
     */
    private void announceIfTheArbiterDidNot(Vote<?> arbiterVote, boolean[] releasedOn, String hint) {
        if (!arbiterVote.says(Boolean.TRUE::equals)) {
            hints.announce(releasedOn, hint);
        }
    }

    /**
     * Whether {@code node}'s release announces the release: every node's if the arbiter is not known
     * ({@code announcer} -1), the arbiter's alone otherwise; none without an announcement.
     */
    private static boolean announces(int node, RedlockNode.Announcement announcement, int announcer) {
        return announcement != null && (announcer < 0 || announcer == node);
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        if (renewals.isEmpty()) {
            return;
        }
        long start = System.nanoTime();
        // Every answer is waited for: each lease needs its own majority. This runs on the
        // watchdog's thread, not a caller's.
        List<Vote<RenewalOutcome[]>> answers = calls.ask((index, node) -> {
            RenewalOutcome[] perLease = new RenewalOutcome[renewals.size()];
            node.renew(renewals, (lease, outcome) -> perLease[lease] = outcome);
            return perLease;
        }, votesSoFar -> false);
        List<Vote<RenewalOutcome[]>> votes = health.heldBack(answers);
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        for (int i = 0; i < renewals.size(); i++) {
            int renewed = 0;
            int lost = 0;
            for (int node = 0; node < votes.size(); node++) {
                RenewalOutcome outcome = votes.get(node) instanceof Vote.Answer<RenewalOutcome[]> answer
                        ? answer.value()[i] : null;
                if (outcome == RenewalOutcome.RENEWED) {
                    renewed++;
                }
                // "Not ours" is true even from a node whose votes are held back: it forgot the lock.
                if (answers.get(node) instanceof Vote.Answer<RenewalOutcome[]> answer
                        && answer.value()[i] == RenewalOutcome.LOST) {
                    lost++;
                }
            }
            long ttl = renewals.get(i).ttlMillis();
            if (renewed >= quorum && calls.validity(ttl, elapsedMillis) > 0) {
                outcomes.outcome(i, RenewalOutcome.RENEWED);
            }
            else if (lost > calls.size() - quorum) {
                // So many nodes say "not ours" that no majority can hold it any more.
                outcomes.outcome(i, RenewalOutcome.LOST);
            }
            else {
                outcomes.outcome(i, RenewalOutcome.FAILED);
            }
        }
    }

    /** A renewed lease is valid for its ttl less the drift allowance, from the round's start. */
    @Override
    public long renewedValidityMillis(long ttlMillis) {
        return Math.max(0, ttlMillis - calls.drift(ttlMillis));
    }

    /** Closes every node, the fan-out threads and the nodes' resources; only the first call does. */
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
     * Each node's state of the lock, and a majority summary: held if a majority holds the key, for
     * the lease that a majority still has; the fencing counter that a majority has reached, which is
     * the last token issued (an issued token was written back to a majority first). A node that did
     * not answer, or whose votes are held back, is listed with why, and counts as not holding it.
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
            perNode.add(new NodeLockState(nodeNames.get(i), state, health.votes(i) ? null
                    : Vote.Absent.HELD_BACK.reason()));
            if (state.held()) {
                // A key without expiry (a foreign client's) outlasts any lease.
                pttls.add(state.pttlMillis() == -1 ? Long.MAX_VALUE : state.pttlMillis());
            }
            counters.add(state.lastFencingToken());
            queued = Math.max(queued, state.queueLength());
        }
        pttls.sort(Comparator.reverseOrder());
        counters.sort(Comparator.reverseOrder());
        boolean held = pttls.size() >= quorum;
        long pttl = !held ? -2 : pttls.get(quorum - 1) == Long.MAX_VALUE ? -1 : pttls.get(quorum - 1);
        long fence = counters.size() >= quorum ? counters.get(quorum - 1) : 0;
        return new LockState(held, pttl, queued, fence, perNode);
    }

    /** Pings every node at once; a node whose votes are held back answers, but does not count. */
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
