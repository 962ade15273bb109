package io.github.distlock.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.springframework.context.SmartLifecycle;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.NonBlockingLockBackend;
import io.github.distlock.redis.RedisKeyNaming;
import io.github.distlock.redis.RedisLockBackend;

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
 * released; the other nodes' deletes finish in the background. Short of a majority of answers at
 * the node timeout, it waits for those still on their way, then asks the nodes whose answers were
 * lost once more if they are up ({@link #releaseAgainWhereUnanswered}). The arbiter node publishes a
 * release hint ({@link RedlockReleaseHints}) from the same script as it deletes the lock, to the
 * instance at the head of the lock's wake-up line there (the instances whose contended attempts
 * found it taken, by arrival), or to every instance if nobody alive is in line (the nodes that
 * released it announce it to every instance, if the arbiter did not).</li>
 * </ul>
 *
 * <p>Fewer than a majority answering at all is not "taken" but a backend failure:
 * {@link RedlockQuorumException}, naming how many nodes answered, so a caller can tell an outage
 * from contention. If those nodes are up and were only late (a loaded machine, a pause of this JVM),
 * the miss is transient ({@link #isTransient}): a lock call with wait time left tries again.
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

    /**
     * How long, beyond the node timeout, a node that replied counts as up: a round it then misses only
     * for time (a loaded machine, a pause of this JVM) is a transient miss, which a waiting caller
     * retries ({@link #isTransient}). A node silent for longer is taken to be down, and fails the call.
     */
    private static final long REPLIED_RECENTLY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** The fixed part of the drift allowance: clocks tick in milliseconds. */
    private static final long DRIFT_FLOOR_MILLIS = 2;

    private final List<FencingLockBackend> nodes;
    private final List<String> nodeNames;
    private final String keyPrefix;
    private final long nodeTimeoutNanos;
    private final double driftFactor;
    private final int quorum;
    private final ExecutorService fanOut;
    /** Closed after the nodes: what they run on (their clients), or nothing. */
    private final AutoCloseable resources;
    /** Per node, whether its votes count (the delayed-restart rule); {@code null}: always. */
    private final List<NodeRestartGuard> guards;
    /** Per node, what its non-blocking commands tell of whether it answers at all. */
    private final List<Responsiveness> responsiveness;
    /** The longest lease asked for, which a restarted node must outlive before it votes. */
    private final LongAccumulator longestLease;
    /** By token: acquisitions whose answers are not all in yet (see {@link #acquireAnswered}). */
    private final ConcurrentHashMap<String, AcquiresInFlight> acquiresInFlight = new ConcurrentHashMap<>();
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
        this.nodes = List.copyOf(nodes);
        this.nodeNames = List.copyOf(nodeNames);
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        this.nodeTimeoutNanos = nodeTimeout.toNanos();
        this.driftFactor = driftFactor;
        this.quorum = nodes.size() / 2 + 1;
        this.fanOut = Executors.newCachedThreadPool(daemonThreads());
        List<Responsiveness> perNode = new ArrayList<>(nodes.size());
        for (int i = 0; i < nodes.size(); i++) {
            perNode.add(new Responsiveness());
        }
        this.responsiveness = List.copyOf(perNode);
        this.resources = resources;
        if (guards != null && guards.size() != nodes.size()) {
            throw new IllegalArgumentException("One guard per node: " + guards.size() + " guards, " + nodes.size()
                    + " nodes");
        }
        this.guards = guards == null ? null : List.copyOf(guards);
        this.longestLease = longestLease;
        this.hints = hints;
        this.announcesItsReleases = new boolean[nodes.size()];
        for (int i = 0; i < nodes.size(); i++) {
            announcesItsReleases[i] = nodes.get(i) instanceof RedisLockBackend;
        }
    }

    /**
     * The release hints this backend's releases send, to pass to the {@link io.github.distlock.core.LockWaiters}
     * of the lock service ({@link RedlockReleaseHints#deliverTo}); {@code null} if it sends none.
     */
    public RedlockReleaseHints releaseHints() {
        return hints;
    }

    private static ThreadFactory daemonThreads() {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, "distributed-lock-redlock-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
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
            votes = acquireVotes(all(), 0, key, token, ttlMillis, contended != null ? lineNode(arbiter()) : -1);
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
            boolean[] missing = new boolean[nodes.size()];
            int held = 0;
            for (int i = 0; i < votes.size(); i++) {
                missing[i] = !grantedBy(votes.get(i));
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
                if (vote.value().acquired()) {
                    granted++;
                }
            }
        }
        long validity = ttlMillis - elapsedMillis - drift(ttlMillis);
        if (granted >= quorum && validity > 0) {
            return AcquireResult.acquired(0, validity);
        }
        boolean tooSlow = granted >= quorum;
        // Lost the vote, ran out of validity, or too few answered: give back whatever was set,
        // on the nodes that granted it and on those that did not answer, which may have set the key
        // all the same. Nodes that answered "taken" hold nothing of ours.
        boolean[] mayHoldOurs = new boolean[votes.size()];
        boolean[] holdOurs = new boolean[votes.size()];
        for (int i = 0; i < votes.size(); i++) {
            holdOurs[i] = grantedBy(votes.get(i));
            mayHoldOurs[i] = !votes.get(i).answered() || holdOurs[i];
        }
        giveBack(mayHoldOurs, holdOurs, key, token);
        if (granted < answered) {
            long now = System.nanoTime();
            markContended(key, new Contention(now, arbiter >= 0 ? contended.fullVoteAt : start));
        }
        if (answered < quorum) {
            throw new RedlockQuorumException(key, "acquire", answered, nodes.size(), quorum, failures(votes),
                    missedOnlyForTime(votes));
        }
        if (tooSlow) {
            // Nobody else holds it: calling it "taken", and waiting for it, would end in a message
            // blaming another owner, while every further vote is as slow as this one.
            throw new RedlockValidityException(key, granted, nodes.size(), elapsedMillis, drift(ttlMillis), ttlMillis,
                    Duration.ofNanos(nodeTimeoutNanos));
        }
        return AcquireResult.notAcquired(0, 0);
    }

    /**
     * An acquire that found fewer than a majority answering, having given back what it may have set
     * (see {@link #tryAcquire}), is transient if the nodes that did not answer are up and were only
     * late: the next round, with a token of its own, may well pass. Votes are never carried over from
     * one round to the next.
     */
    @Override
    public boolean isTransient(LockBackendException failure) {
        return failure instanceof RedlockQuorumException quorumMissed && quorumMissed.late();
    }

    /**
     * Whether every node without a vote only ran out of time (its answer did not come within the node
     * timeout, or it was not asked as a command of it was overdue) and answered something shortly
     * before: a node that refused, failed, is held back or has been silent for long is no late answer.
     */
    private <T> boolean missedOnlyForTime(List<Vote<T>> votes) {
        long now = System.nanoTime();
        for (int i = 0; i < votes.size(); i++) {
            Throwable failure = votes.get(i).failure();
            if (failure == null) {
                continue;
            }
            boolean late = failure instanceof TimeoutException || failure instanceof NotAnswering
                    || failure instanceof LockBackendException && failure.getCause() instanceof TimeoutException;
            if (!late || !responsiveness.get(i).repliedWithin(now, nodeTimeoutNanos + REPLIED_RECENTLY_NANOS)) {
                return false;
            }
        }
        return true;
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
     * none) is asked with {@link RedisLockBackend#tryAcquireOrWaitAsync}: if the lock is taken there,
     * this instance joins its wake-up line (see {@link RedlockReleaseHints}).
     */
    private List<Vote<AcquireResult>> acquireVotes(boolean[] which, int alreadyHeld, LockKey key, String token,
            long ttlMillis, int lineNode) {
        // Decided as soon as a majority granted it: a stopped node must not hold every acquisition
        // up for its node timeout. A vote that fails waits for every answer, so that what was set can
        // be given back.
        // An attempt that reuses the token of one given back (a caller of this SPI may) starts afresh: the
        // facts of that attempt would have its late grants given back.
        AcquiresInFlight inFlight = acquiresInFlight.compute(token, (ours, existing) ->
                (existing != null && !existing.released ? existing : new AcquiresInFlight(nodes.size()))
                        .add(nodes.size()));
        FencingLockBackend line = lineNode >= 0 ? nodes.get(lineNode) : null;
        return heldBack(ask(which, node -> node == line
                ? ((RedisLockBackend) node).tryAcquireOrWait(key, token, ttlMillis, hints.waiterId(),
                        hints.lineAliveMillis())
                : node.tryAcquire(key, token, ttlMillis),
                node -> node == line ? ((RedisLockBackend) node).tryAcquireOrWaitAsync(key, token, ttlMillis,
                        hints.waiterId(), hints.lineAliveMillis()) : node.tryAcquireAsync(key, token, ttlMillis),
                answers -> alreadyHeld + count(answers, AcquireResult::acquired) >= quorum,
                (index, vote, late) -> acquireAnswered(inFlight, key, token, index, vote, late)));
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
        boolean[] first = new boolean[nodes.size()];
        first[arbiter] = true;
        Vote<AcquireResult> arbiterVote = acquireVotes(first, 0, key, token, ttlMillis, lineNode(arbiter)).get(arbiter);
        if (arbiterVote.answered() && !arbiterVote.value().acquired()) {
            return null;
        }
        boolean[] others = new boolean[nodes.size()];
        Arrays.fill(others, true);
        others[arbiter] = false;
        List<Vote<AcquireResult>> votes = new ArrayList<>(
                acquireVotes(others, grantedBy(arbiterVote) ? 1 : 0, key, token, ttlMillis));
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
        for (int i = 0; i < nodes.size(); i++) {
            Responsiveness node = responsiveness.get(i);
            if (!node.suspect && node.mayAsk(now, nodeTimeoutNanos) && (guards == null || guards.get(i).votes())) {
                return i;
            }
        }
        return -1;
    }

    /**
     * {@code arbiter} if this instance can wait in line there: a Redis node whose hints, those for
     * this instance included, reach it now; -1 otherwise.
     */
    private int lineNode(int arbiter) {
        return arbiter >= 0 && hints != null && nodes.get(arbiter) instanceof RedisLockBackend
                && hints.isDelivering(arbiter) ? arbiter : -1;
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

    private static boolean grantedBy(Vote<AcquireResult> vote) {
        return vote.answered() && vote.value().acquired();
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
            if (vote.value().acquired()) {
                granted++;
            }
            else {
                taken++;
            }
        }
        int quorum = votes.size() / 2 + 1;
        return granted > 0 && granted < quorum && granted + taken >= quorum && taken < quorum
                && grantedBy(votes.get(firstAnswered));
    }

    /**
     * Draws a token on every node that still holds the lock, writes the largest back to a majority,
     * and issues it. Returns 0 if too few nodes still hold the lock to issue a token (it is lost).
     */
    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        // Any majority of draws will do: it meets the majority the previous token was written to.
        List<Vote<Long>> drawn = heldBack(ask(node -> node.issueFencingToken(key, token, ttlMillis),
                answers -> count(answers, drawnToken -> drawnToken > 0) >= quorum));
        long largest = 0;
        int holding = 0;
        int answered = 0;
        for (Vote<Long> vote : drawn) {
            if (vote.answered()) {
                answered++;
                if (vote.value() > 0) {
                    holding++;
                    largest = Math.max(largest, vote.value());
                }
            }
        }
        if (holding < quorum) {
            if (answered - holding > nodes.size() - quorum) {
                return 0; // so many nodes no longer hold it that no majority can
            }
            throw new RedlockQuorumException(key, "fencing token", answered, nodes.size(), quorum, failures(drawn));
        }
        long fence = largest;
        List<Vote<Boolean>> raised = heldBack(ask(node -> node.raiseFencingCounter(key, token, fence, ttlMillis),
                answers -> count(answers, Boolean::booleanValue) >= quorum));
        int written = 0;
        answered = 0;
        for (Vote<Boolean> vote : raised) {
            if (vote.answered()) {
                answered++;
                if (vote.value()) {
                    written++;
                }
            }
        }
        if (written >= quorum) {
            return fence;
        }
        if (answered - written > nodes.size() - quorum) {
            return 0;
        }
        throw new RedlockQuorumException(key, "fencing token", answered, nodes.size(), quorum, failures(raised));
    }

    /**
     * A node's answer to an acquire, on time or late. A node that grants after the vote was
     * decided, and after the lock was released or the failed attempt given back, may keep a key
     * nobody will delete until its lease ends: the release may have reached that node first (for
     * example one of them was sent on a fan-out thread), or was never sent (the node had a command
     * outstanding past the node timeout). Whether it did, that node's release answer tells: it deleted
     * our key, or it found none (or was not sent). Only in the second case is the release sent again
     * (see {@link AcquiresInFlight}). A late failure (the node timeout, a dropped connection) may hide
     * a grant, so it counts as one here. Most late grants are the uncontended case, answered in order
     * on the connection that then carries the release, and resending it to both late nodes made a
     * cycle 12 commands instead of 10.
     */
    private void acquireAnswered(AcquiresInFlight inFlight, LockKey key, String token, int index,
            Vote<AcquireResult> vote, boolean late) {
        if (late && inFlight.released && (!vote.answered() || vote.value().acquired())
                && inFlight.noted(index, AcquiresInFlight.LATE_GRANT)) {
            releaseAgain(key, token, index);
        }
        // This attempt's own count: a later attempt with the same token may have a fresh entry by now.
        acquiresInFlight.compute(token, (ours, state) -> inFlight.answered() && state == inFlight ? null : state);
    }

    /**
     * Sends node {@code index} the release again, without waiting for it, even while a command of that
     * node is overdue ({@link Responsiveness}): this one command, behind the grant on the same connection,
     * is all that takes a late grant back. Not sent, the grant stayed set, owned by nobody, for its whole
     * lease, and a few such leftovers of different attempts on a majority of nodes stalled the lock for
     * everyone until they expired.
     */
    private void releaseAgain(LockKey key, String token, int index) {
        // Possibly on the node client's I/O thread: never block here. The other nodes' votes are
        // "not asked", cast at once, and settle the ballot.
        boolean[] only = new boolean[nodes.size()];
        only[index] = true;
        ask(only, node -> releaseAndHint(node, key, token, null, -1),
                node -> releaseAndHintAsync(node, key, token, null, -1), answers -> true, null, 0, only);
    }

    /**
     * The acquire commands of one token whose answers are not all in yet, whether the token was
     * released meanwhile (or its failed attempt given back), and per node what is known of a late
     * grant and of the release. The count
     * is guarded by the map's compute; the per-node facts are set atomically, by whichever of the
     * two answers comes second deciding whether the release must be sent again.
     */
    private static final class AcquiresInFlight {

        /** The node granted the acquire after the token was released, or failed late and may have. */
        static final int LATE_GRANT = 1;
        /** The node's release deleted our key: it ran after our grant there. */
        static final int RELEASE_DELETED = 2;
        /** The node's release found no key of ours, or gave no answer: it may have run before the grant. */
        static final int RELEASE_NOT_DELETED = 4;

        private static final int RELEASE_AGAIN = LATE_GRANT | RELEASE_NOT_DELETED;

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

        /** Records {@code fact} of {@code node}; {@code true} once, when the node's release must be sent again. */
        boolean noted(int node, int fact) {
            int before = facts.getAndAccumulate(node, fact, (known, added) -> known | added);
            return (before & RELEASE_AGAIN) != RELEASE_AGAIN && ((before | fact) & RELEASE_AGAIN) == RELEASE_AGAIN;
        }
    }

    @Override
    public boolean release(LockKey key, String token) {
        AcquiresInFlight inFlight = acquiresInFlight.get(token);
        if (inFlight != null) {
            inFlight.released = true;
        }
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
            boolean deleted = vote.answered() && vote.value();
            if (inFlight != null && inFlight.noted(index,
                    deleted ? AcquiresInFlight.RELEASE_DELETED : AcquiresInFlight.RELEASE_NOT_DELETED)) {
                releaseAgain(key, token, index);
            }
            if (late && index == announcer && arbiterLate.compareAndExchange(null, vote) instanceof boolean[] on) {
                announceIfTheArbiterDidNot(vote, on, hint);
            }
        };
        // A release has no next round of its own above it: answers still on their way when a majority
        // has not answered are waited for, within their commands' own bounds.
        List<Vote<Boolean>> votes = ask(all(), node -> releaseAndHint(node, key, token, hint, announcer),
                node -> releaseAndHintAsync(node, key, token, hint, announcer),
                answers -> count(answers, Boolean::booleanValue) >= quorum, everyAnswer, quorum, null);
        if (count(votes, Boolean::booleanValue) < quorum && count(votes, answer -> true) < quorum
                && missedOnlyForTime(votes)) {
            votes = releaseAgainWhereUnanswered(votes, key, token, hint, announcer);
        }
        int released = 0;
        int answered = 0;
        boolean[] releasedOn = new boolean[votes.size()];
        for (int i = 0; i < votes.size(); i++) {
            Vote<Boolean> vote = votes.get(i);
            if (vote.answered()) {
                answered++;
                if (vote.value()) {
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
            throw new RedlockQuorumException(key, "release", answered, nodes.size(), quorum, failures(votes));
        }
        return false;
    }

    /**
     * A second round of a release to the nodes whose answer to the first did not come, from nodes that
     * are up (see {@link #missedOnlyForTime}); their first commands have ended by now. Where the first
     * was sent, any answer counts as released, as for a command the client re-sent: the first delivery,
     * whose answer was lost, may have deleted our key. Returns the first round's votes with these in
     * place of the missing ones.
     */
    private List<Vote<Boolean>> releaseAgainWhereUnanswered(List<Vote<Boolean>> first, LockKey key, String token,
            String hint, int announcer) {
        boolean[] unanswered = new boolean[first.size()];
        boolean[] sent = new boolean[first.size()];
        for (int i = 0; i < first.size(); i++) {
            unanswered[i] = !first.get(i).answered();
            sent[i] = unanswered[i] && !(first.get(i).failure() instanceof NotAnswering);
        }
        int releasedBefore = count(first, Boolean::booleanValue);
        List<Vote<Boolean>> again = ask(unanswered, node -> releaseAndHint(node, key, token, hint, announcer),
                node -> releaseAndHintAsync(node, key, token, hint, announcer),
                answers -> releasedBefore + releasedAgain(answers, sent) >= quorum, null, quorum, null);
        List<Vote<Boolean>> merged = new ArrayList<>(first);
        for (int i = 0; i < first.size(); i++) {
            Vote<Boolean> vote = again.get(i);
            if (unanswered[i]) {
                merged.set(i, vote.answered() ? new Vote<>(vote.value() || sent[i], null) : vote);
            }
        }
        return merged;
    }

    /** How many of a second round's answers count as released (see {@link #releaseAgainWhereUnanswered}). */
    private static int releasedAgain(List<Vote<Boolean>> answers, boolean[] sentBefore) {
        int released = 0;
        for (int i = 0; i < answers.size(); i++) {
            Vote<Boolean> vote = answers.get(i);
            released += vote.answered() && (vote.value() || sentBefore[i]) ? 1 : 0;
        }
        return released;
    }

    /**
     * The arbiter's answer to a release came after the majority's: if it did not delete the lock (or
     * gave no answer), it announced nothing, so the nodes that did release it announce it.
     */
    private void announceIfTheArbiterDidNot(Vote<?> arbiterVote, boolean[] releasedOn, String hint) {
        if (!(arbiterVote.answered() && Boolean.TRUE.equals(arbiterVote.value()))) {
            hints.announce(releasedOn, hint);
        }
    }

    /**
     * A node's release, announcing {@code hint} from its script when it can ({@code null}: none) and
     * it is the {@code announcer} (-1: every node). A Redis node runs the Redlock's own release
     * script either way, which looks for no wait queue (a Redlock keeps none on its nodes).
     */
    private boolean releaseAndHint(FencingLockBackend node, LockKey key, String token, String hint, int announcer) {
        if (node instanceof RedisLockBackend redis) {
            return announces(node, hint, announcer)
                    ? redis.releaseAndHint(key, token, hints.channel(), hint, announcer >= 0)
                    : redis.releaseAndHint(key, token, null, null, false);
        }
        return node.release(key, token);
    }

    /** {@link #releaseAndHint} without blocking. */
    private CompletableFuture<Boolean> releaseAndHintAsync(NonBlockingLockBackend node, LockKey key, String token,
            String hint, int announcer) {
        if (node instanceof RedisLockBackend redis) {
            return announces(node, hint, announcer)
                    ? redis.releaseAndHintAsync(key, token, hints.channel(), hint, announcer >= 0)
                    : redis.releaseAndHintAsync(key, token, null, null, false);
        }
        return node.releaseAsync(key, token);
    }

    private boolean announces(Object node, String hint, int announcer) {
        return hint != null && (announcer < 0 || nodes.get(announcer) == node);
    }

    /**
     * Gives a failed attempt back on the nodes marked in {@code which}. A node still working on that
     * attempt's acquire may grant it after this (see {@link #acquireAnswered}): then it is given back
     * again when its answer comes, unless this give-back deleted our key there. The nodes that granted it
     * ({@code granted}) are sent the give-back even while a command of theirs is overdue
     * ({@link Responsiveness}): nothing else would take their grant back before its lease ends.
     */
    private void giveBack(boolean[] which, boolean[] granted, LockKey key, String token) {
        boolean any = false;
        for (boolean node : which) {
            any |= node;
        }
        if (!any) {
            return;
        }
        AcquiresInFlight inFlight = acquiresInFlight.get(token);
        VoteListener<Boolean> everyAnswer = null;
        if (inFlight != null) {
            inFlight.released = true;
            everyAnswer = (index, vote, late) -> {
                boolean deleted = vote.answered() && vote.value();
                if (which[index] && inFlight.noted(index,
                        deleted ? AcquiresInFlight.RELEASE_DELETED : AcquiresInFlight.RELEASE_NOT_DELETED)) {
                    releaseAgain(key, token, index);
                }
            };
        }
        ask(which, node -> releaseAndHint(node, key, token, null, -1),
                node -> releaseAndHintAsync(node, key, token, null, -1), answers -> false, everyAnswer, 0, granted);
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        if (renewals.isEmpty()) {
            return;
        }
        long start = System.nanoTime();
        // Every answer is waited for: each lease needs its own majority. This runs on the
        // watchdog's thread, not a caller's.
        List<Vote<RenewalOutcome[]>> answers = ask(node -> {
            RenewalOutcome[] perLease = new RenewalOutcome[renewals.size()];
            node.renew(renewals, (index, outcome) -> perLease[index] = outcome);
            return perLease;
        }, votesSoFar -> false);
        List<Vote<RenewalOutcome[]>> votes = heldBack(answers);
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        for (int i = 0; i < renewals.size(); i++) {
            int renewed = 0;
            int lost = 0;
            for (int node = 0; node < votes.size(); node++) {
                RenewalOutcome outcome = votes.get(node).answered() ? votes.get(node).value()[i] : null;
                if (outcome == RenewalOutcome.RENEWED) {
                    renewed++;
                }
                // "Not ours" is true even from a node whose votes are held back: it forgot the lock.
                if (answers.get(node).answered() && answers.get(node).value()[i] == RenewalOutcome.LOST) {
                    lost++;
                }
            }
            long ttl = renewals.get(i).ttlMillis();
            if (renewed >= quorum && ttl - elapsedMillis - drift(ttl) > 0) {
                outcomes.outcome(i, RenewalOutcome.RENEWED);
            }
            else if (lost > nodes.size() - quorum) {
                // So many nodes say "not ours" that no majority can hold it any more.
                outcomes.outcome(i, RenewalOutcome.LOST);
            }
            else {
                outcomes.outcome(i, RenewalOutcome.FAILED);
            }
        }
    }

    /**
     * The votes with those of held-back nodes (restarted too recently, see {@link NodeRestartGuard})
     * turned into "no answer". Asked after the replies are in: a node whose connection changed
     * while the vote ran is held back from the moment the change was seen, before its reply was read.
     */
    private <T> List<Vote<T>> heldBack(List<Vote<T>> votes) {
        if (guards == null) {
            return votes;
        }
        List<Vote<T>> counted = new ArrayList<>(votes.size());
        for (int i = 0; i < votes.size(); i++) {
            Vote<T> vote = votes.get(i);
            counted.add(vote.answered() && !guards.get(i).votes()
                    ? new Vote<>(null, new HeldBack()) : vote);
        }
        return counted;
    }

    /** Why a node's answer did not count: it restarted recently, or has not been checked since it reconnected. */
    private static final class HeldBack extends RuntimeException {

        HeldBack() {
            super("restarted recently or not yet checked since it reconnected: its votes are held back", null, false,
                    false);
        }
    }

    /** A renewed lease is valid for its ttl less the drift allowance, from the round's start. */
    @Override
    public long renewedValidityMillis(long ttlMillis) {
        return Math.max(0, ttlMillis - drift(ttlMillis));
    }

    private long drift(long ttlMillis) {
        return (long) (ttlMillis * driftFactor) + DRIFT_FLOOR_MILLIS;
    }

    /** One node's answer, or why it gave none. */
    private record Vote<T>(T value, Throwable failure) {

        /**
         * Shared, without a stack trace: a release of a late grant asks one node and marks the other
         * four "not asked", which must not cost four stack traces.
         */
        private static final Vote<Object> NOT_ASKED = new Vote<>(null, new NotAsked());

        @SuppressWarnings("unchecked")
        static <T> Vote<T> notAsked() {
            // Its value is null, so it is a Vote of any type.
            return (Vote<T>) (Vote<?>) NOT_ASKED;
        }

        boolean answered() {
            return failure == null;
        }
    }

    /** The vote of a node this question was not put to. */
    private static final class NotAsked extends RuntimeException {

        NotAsked() {
            super("not asked", null, false, false);
        }
    }

    /**
     * Asks every node at once, on the fan-out threads, and waits until {@code decided} says the
     * counted answers so far settle the outcome, or every node answered, or the node timeout (and
     * a little slack for the threads to be scheduled) is over. Each node call bounds itself by the
     * node timeout, so the deadline only cuts off a node stuck beyond it. Nodes that have not
     * answered by then count as "no answer"; their calls go on in the background and are harmless:
     * every command is idempotent for its token, and one node's commands stay in order on its
     * connection.
     *
     * @param decided tested with the answers so far, held-back nodes already taken out
     */
    private <T> List<Vote<T>> ask(Function<FencingLockBackend, T> call, Predicate<List<Vote<T>>> decided) {
        return ask(all(), call, null, decided, null);
    }

    private boolean[] all() {
        boolean[] all = new boolean[nodes.size()];
        Arrays.fill(all, true);
        return all;
    }

    /**
     * Asks the nodes marked in {@code which}; the others' votes are "no answer". A node that can be
     * asked without blocking ({@link NonBlockingLockBackend}) is sent the question from this thread and
     * its answer is counted as it arrives; the others are asked on the fan-out threads. On the hot
     * path (acquire, release) this saves a thread hand-over per node both ways, which on a few cores
     * shared with the nodes is most of the time a vote takes.
     *
     * @param nonBlockingCall the same question without blocking, or {@code null}; it may answer
     *        {@code null} (see {@link NonBlockingLockBackend}), and then {@code call} is asked
     * @param everyAnswer told of every node's vote, also those that come after the outcome was
     *        decided ({@code late}); may be {@code null}; must not block, as it may run on a node
     *        client's I/O thread
     */
    private <T> List<Vote<T>> ask(boolean[] which, Function<FencingLockBackend, T> call,
            Function<NonBlockingLockBackend, CompletableFuture<T>> nonBlockingCall, Predicate<List<Vote<T>>> decided,
            VoteListener<T> everyAnswer) {
        return ask(which, call, nonBlockingCall, decided, everyAnswer, 0, null);
    }

    /**
     * {@link #ask(boolean[], Function, Function, Predicate, VoteListener)}, but while fewer than
     * {@code answersWanted} nodes answered, answers still on their way at the node timeout are waited
     * for until their commands end by their own bound: the node timeout, which Lettuce's timer enforces
     * within a tick (100 ms), from when the command left, which a fan-out thread may send later. A
     * healthy node's answer that a loaded machine delayed past the deadline then still counts.
     *
     * @param evenIfOverdue the nodes sent their command even while one of theirs is overdue; {@code null}: none
     */
    private <T> List<Vote<T>> ask(boolean[] which, Function<FencingLockBackend, T> call,
            Function<NonBlockingLockBackend, CompletableFuture<T>> nonBlockingCall, Predicate<List<Vote<T>>> decided,
            VoteListener<T> everyAnswer, int answersWanted, boolean[] evenIfOverdue) {
        Ballot<T> ballot = new Ballot<>(nodes.size(), votes -> decided.test(heldBack(votes)), everyAnswer);
        for (int i = 0; i < nodes.size(); i++) {
            if (!which[i]) {
                ballot.cast(i, Vote.notAsked());
                continue;
            }
            FencingLockBackend node = nodes.get(i);
            int index = i;
            if (nonBlockingCall != null && node instanceof NonBlockingLockBackend nonBlocking
                    && askWithoutBlocking(ballot, index, responsiveness.get(i),
                            evenIfOverdue != null && evenIfOverdue[i],
                            () -> nonBlockingCall.apply(nonBlocking))) {
                continue;
            }
            try {
                fanOut.execute(() -> {
                    Vote<T> vote;
                    try {
                        vote = new Vote<>(call.apply(node), null);
                        if (nonBlockingCall != null) {
                            // A lock command (no renewal or ping, which report failures as answers): it replied.
                            responsiveness.get(index).replied();
                        }
                    }
                    catch (RuntimeException | Error ex) {
                        vote = new Vote<>(null, ex);
                    }
                    ballot.cast(index, vote);
                });
            }
            catch (RejectedExecutionException ex) {
                ballot.cast(i, new Vote<>(null, new LockBackendException("", "The Redlock backend is closed", ex)));
            }
        }
        long deadline = System.nanoTime() + nodeTimeoutNanos + TimeUnit.MILLISECONDS.toNanos(5);
        return ballot.await(deadline, answersWanted, deadline + nodeTimeoutNanos + TimeUnit.MILLISECONDS.toNanos(100));
    }

    /**
     * Sends one node its question without blocking, and casts its vote when the answer comes.
     *
     * @return {@code false} if the node cannot be asked that way now: ask it on a fan-out thread
     */
    private <T> boolean askWithoutBlocking(Ballot<T> ballot, int index, Responsiveness node, boolean evenIfOverdue,
            Supplier<CompletableFuture<T>> send) {
        if (!evenIfOverdue && !node.mayAsk(System.nanoTime(), nodeTimeoutNanos)) {
            ballot.cast(index, new Vote<>(null, new NotAnswering()));
            return true;
        }
        CompletableFuture<T> answer;
        try {
            answer = send.get();
        }
        catch (RuntimeException ex) {
            ballot.cast(index, new Vote<>(null, ex));
            return true;
        }
        if (answer == null) {
            return false;
        }
        node.sent();
        answer.whenComplete((value, failure) -> {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            if (cause == null) {
                node.replied();
            }
            node.ended(cause == null || !(cause instanceof LockBackendException ex
                    && ex.getCause() instanceof TimeoutException));
            ballot.cast(index, cause == null ? new Vote<>(value, null) : new Vote<>(null, cause));
        });
        return true;
    }

    /**
     * Whether a node answers at all, from its non-blocking commands. A node that is stopped or hung (the
     * connection stays open, nothing comes back) would otherwise be sent every acquire and release, each
     * cancelled after the node timeout but kept by the client until the node answers, and on waking it would
     * work through them all at once, starving the live nodes of the cores they share. So once a node has left
     * a command unanswered for longer than the node timeout, it is not asked again until that command ends
     * (its timeout cancels it, or the node answers): one probe per timeout instead of every call, and its
     * vote is "no answer" at once, which is what waiting for it would have given. The one exception is the
     * release that takes a late grant back ({@link #releaseAgain}): skipped, it left the key set.
     */
    private static final class Responsiveness {

        private final AtomicInteger pending = new AtomicInteger();
        /** When it last answered, or when a command was sent to it while none was pending. */
        private volatile long heardNanos = System.nanoTime();
        /** Whether its last command to end ended by its timeout: then it is only probed. */
        private volatile boolean suspect;
        /**
         * When it last replied (an error is no reply) to a command, on either path, or when this backend
         * was made: it counts as up until it has been silent for a while.
         */
        private volatile long repliedNanos = System.nanoTime();

        void replied() {
            repliedNanos = System.nanoTime();
        }

        /** Whether it replied within {@code windowNanos} before {@code now}. */
        boolean repliedWithin(long now, long windowNanos) {
            return now - repliedNanos <= windowNanos;
        }

        /**
         * Whether to send it a command now: not while a command of a suspect node, or one older than
         * the timeout, is pending.
         */
        boolean mayAsk(long now, long timeoutNanos) {
            int inFlight = pending.get();
            if (suspect) {
                return inFlight == 0;
            }
            return inFlight == 0 || now - heardNanos <= timeoutNanos;
        }

        void sent() {
            if (pending.getAndIncrement() == 0 && !suspect) {
                heardNanos = System.nanoTime();
            }
        }

        /** @param answered {@code false} if it ended by its timeout */
        void ended(boolean answered) {
            if (answered) {
                suspect = false;
                heardNanos = System.nanoTime();
            }
            else {
                suspect = true;
            }
            pending.decrementAndGet();
        }
    }

    /** A node not asked, as it left a command unanswered for longer than the node timeout. */
    private static final class NotAnswering extends RuntimeException {

        NotAnswering() {
            super("not asked: it left a command unanswered for longer than the node timeout, and is asked again once "
                    + "that command has ended", null, false, false);
        }
    }

    /** Told of each node's vote as it comes in. */
    @FunctionalInterface
    private interface VoteListener<T> {

        /**
         * @param late whether the vote came after the outcome was decided without it
         */
        void answered(int node, Vote<T> vote, boolean late);
    }

    /** How many answers so far say yes. */
    private static <T> int count(List<Vote<T>> votes, Predicate<T> yes) {
        int count = 0;
        for (Vote<T> vote : votes) {
            if (vote.answered() && yes.test(vote.value())) {
                count++;
            }
        }
        return count;
    }

    /**
     * The answers of one question to every node, as they come in. A lock and condition rather than
     * {@code synchronized}, so that a virtual thread waiting here does not pin its carrier.
     */
    private static final class Ballot<T> {

        /** A node whose answer is not in (yet): shared, as it is asked for on every vote cast. */
        private static final Vote<Object> NO_ANSWER_YET = new Vote<>(null, new TimeoutException("no answer yet"));

        private final List<Vote<T>> votes;
        private final Predicate<List<Vote<T>>> decided;
        private final VoteListener<T> everyAnswer;
        private int cast;
        /** Whether every vote is in or {@link #decided} said the votes so far settle it. */
        private boolean settled;
        /** Whether the outcome was read: votes cast from then on are late. */
        private boolean closed;
        /** Whether the waiter is past its deadline, waiting for answers on their way: every vote wakes it. */
        private boolean overtime;
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition changed = lock.newCondition();

        /**
         * @param decided whether the votes so far settle the outcome; asked as each vote comes in, on the
         *        thread that casts it, so the waiting caller is woken once, when it is settled, rather than
         *        once per node
         */
        Ballot(int size, Predicate<List<Vote<T>>> decided, VoteListener<T> everyAnswer) {
            this.decided = decided;
            this.everyAnswer = everyAnswer;
            votes = new ArrayList<>(size);
            for (int i = 0; i < size; i++) {
                votes.add(null);
            }
        }

        void cast(int index, Vote<T> vote) {
            boolean late;
            lock.lock();
            try {
                votes.set(index, vote);
                cast++;
                late = closed;
                if (!settled && (cast == votes.size() || decided.test(snapshot()))) {
                    settled = true;
                    changed.signalAll();
                }
                else if (overtime) {
                    changed.signalAll();
                }
            }
            finally {
                lock.unlock();
            }
            if (everyAnswer != null) {
                everyAnswer.answered(index, vote, late);
            }
        }

        /**
         * The votes once settled or past the deadline; missing ones are "no answer". While fewer than
         * {@code answersWanted} nodes answered and answers are still on their way, past the deadline too,
         * until {@code lastDeadlineNanos}.
         */
        List<Vote<T>> await(long deadlineNanos, int answersWanted, long lastDeadlineNanos) {
            boolean interrupted = false;
            lock.lock();
            try {
                while (!settled) {
                    long now = System.nanoTime();
                    long left = deadlineNanos - now;
                    if (left <= 0) {
                        if (!answersOnTheirWay(answersWanted)) {
                            break;
                        }
                        overtime = true;
                        left = lastDeadlineNanos - now;
                        if (left <= 0) {
                            break;
                        }
                    }
                    try {
                        changed.awaitNanos(left);
                    }
                    catch (InterruptedException ex) {
                        // Node calls are not interruptible (LockBackend's contract); keep the flag for later.
                        interrupted = true;
                    }
                }
                closed = true;
                return snapshot();
            }
            finally {
                lock.unlock();
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Whether fewer than {@code answersWanted} nodes answered, and some answer is not in yet. */
        private boolean answersOnTheirWay(int answersWanted) {
            int answered = 0;
            boolean pending = false;
            for (Vote<T> vote : votes) {
                if (vote == null) {
                    pending = true;
                }
                else if (vote.answered()) {
                    answered++;
                }
            }
            return pending && answered < answersWanted;
        }

        /** Whether {@code vote}, from a snapshot, is of a node whose answer was not in yet. */
        static boolean isPending(Vote<?> vote) {
            return vote == NO_ANSWER_YET;
        }

        @SuppressWarnings("unchecked")
        private static <T> Vote<T> noAnswerYet() {
            // Its value is null, so it is a Vote of any type.
            return (Vote<T>) (Vote<?>) NO_ANSWER_YET;
        }

        private List<Vote<T>> snapshot() {
            List<Vote<T>> copy = new ArrayList<>(votes.size());
            for (Vote<T> vote : votes) {
                copy.add(vote != null ? vote : noAnswerYet());
            }
            return copy;
        }
    }

    /** The nodes that did not answer, and why, for messages. */
    private <T> String failures(List<Vote<T>> votes) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < votes.size(); i++) {
            Vote<T> vote = votes.get(i);
            if (!vote.answered()) {
                if (!text.isEmpty()) {
                    text.append("; ");
                }
                Throwable failure = vote.failure();
                text.append(nodeNames.get(i)).append(": ").append(failure instanceof TimeoutException
                        ? "no answer within the node timeout" : String.valueOf(failure.getMessage()));
            }
        }
        return text.toString();
    }

    /** Closes every node, the fan-out threads and the nodes' resources; only the first call does. */
    @Override
    public void close() {
        synchronized (fanOut) {
            if (fanOut.isShutdown()) {
                return;
            }
            running = false;
            fanOut.shutdownNow();
        }
        List<AutoCloseable> closeables = new ArrayList<>();
        for (LockBackend node : nodes) {
            if (node instanceof AutoCloseable closeable) {
                closeables.add(closeable);
            }
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
        List<Vote<LockState>> answers = ask(node -> inspectable(node).inspect(key), votesSoFar -> false);
        List<NodeLockState> perNode = new ArrayList<>(answers.size());
        List<Long> pttls = new ArrayList<>();
        List<Long> counters = new ArrayList<>();
        long queued = 0;
        for (int i = 0; i < answers.size(); i++) {
            Vote<LockState> answer = answers.get(i);
            if (!answer.answered()) {
                perNode.add(new NodeLockState(nodeNames.get(i), null, describe(answer.failure())));
                continue;
            }
            LockState state = answer.value();
            perNode.add(new NodeLockState(nodeNames.get(i), state, guards != null && !guards.get(i).votes()
                    ? new HeldBack().getMessage() : null));
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
        List<Vote<Reachability>> answers = ask(node -> inspectable(node).ping(), votesSoFar -> false);
        List<NodeReachability> perNode = new ArrayList<>(answers.size());
        for (int i = 0; i < answers.size(); i++) {
            Vote<Reachability> answer = answers.get(i);
            String name = nodeNames.get(i);
            if (!answer.answered()) {
                perNode.add(new NodeReachability(name, false, Duration.ofNanos(System.nanoTime() - start),
                        describe(answer.failure())));
                continue;
            }
            NodeReachability node = answer.value().nodes().get(0);
            if (node.reachable() && guards != null && !guards.get(i).votes()) {
                perNode.add(new NodeReachability(name, false, node.latency(),
                        "answers, but " + new HeldBack().getMessage()));
            }
            else {
                perNode.add(new NodeReachability(name, node.reachable(), node.latency(), node.error()));
            }
        }
        return new Reachability(perNode, quorum);
    }

    private static InspectableLockBackend inspectable(FencingLockBackend node) {
        if (node instanceof InspectableLockBackend inspectable) {
            return inspectable;
        }
        throw new UnsupportedOperationException("Redlock node " + node.getClass().getName()
                + " cannot be inspected: it does not implement InspectableLockBackend");
    }

    private static String describe(Throwable failure) {
        return failure instanceof TimeoutException ? "no answer within the node timeout"
                : String.valueOf(failure.getMessage());
    }
}
