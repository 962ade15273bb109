package io.github.distlock.redlock;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.github.distlock.LockBackendException;

/**
 * One question to the nodes of a Redlock, at once, and their votes: the fan-out, the wait
 * for enough votes, and the validity a majority's answers give. Every Redlock operation
 * is such a call; what a vote means (granted, released, renewed) is the caller's.
 *
 * <p>
 * Validity is ttl − time the call took − drift, on the monotonic clock, where drift = ttl
 * × drift factor + 2 ms: the share of the lease that clock drift between the nodes may
 * have eaten.
 */
final class QuorumCall {

    /**
     * How long, beyond the node timeout, a node that replied counts as up: a call it then
     * misses only for time (a loaded machine, a pause of this JVM) is a transient miss
     * ({@link #missedOnlyForTime}), which a waiting caller retries. A node silent for
     * longer is taken to be down, and fails the call.
     */
    private static final long REPLIED_RECENTLY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** The fixed part of the drift allowance: clocks tick in milliseconds. */
    private static final long DRIFT_FLOOR_MILLIS = 2;

    private final List<RedlockNode> nodes;

    private final List<String> nodeNames;

    private final long nodeTimeoutNanos;

    private final double driftFactor;

    private final int quorum;

    private final NodeHealth health;

    private final ExecutorService fanOut;

    QuorumCall(List<RedlockNode> nodes, List<String> nodeNames, long nodeTimeoutNanos, double driftFactor,
            NodeHealth health) {
        this.nodes = List.copyOf(nodes);
        this.nodeNames = List.copyOf(nodeNames);
        this.nodeTimeoutNanos = nodeTimeoutNanos;
        this.driftFactor = driftFactor;
        this.quorum = nodes.size() / 2 + 1;
        this.health = health;
        this.fanOut = Executors.newCachedThreadPool(daemonThreads());
    }

    private static ThreadFactory daemonThreads() {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, "distributed-lock-redlock-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** One question to one node. */
    @FunctionalInterface
    interface NodeCall<R> {

        /**
         * @param index the node's position among the Redlock's nodes
         */
        R call(int index, RedlockNode node);

    }

    /** How many nodes there are. */
    int size() {
        return nodes.size();
    }

    /** How many nodes must agree: N/2+1. */
    int quorum() {
        return quorum;
    }

    /** The node at {@code index}. */
    RedlockNode node(int index) {
        return nodes.get(index);
    }

    /** The node timeout, which bounds each node's call. */
    long nodeTimeoutNanos() {
        return nodeTimeoutNanos;
    }

    /** The drift allowance for a lease of {@code ttlMillis}. */
    long drift(long ttlMillis) {
        return (long) (ttlMillis * driftFactor) + DRIFT_FLOOR_MILLIS;
    }

    /**
     * How long a lease of {@code ttlMillis} granted by a call that took
     * {@code elapsedMillis} is surely ours.
     */
    long validity(long ttlMillis, long elapsedMillis) {
        return ttlMillis - elapsedMillis - drift(ttlMillis);
    }

    /** Every node marked, to ask them all. */
    boolean[] all() {
        boolean[] all = new boolean[nodes.size()];
        Arrays.fill(all, true);
        return all;
    }

    /** Only node {@code index} marked. */
    boolean[] only(int index) {
        boolean[] only = new boolean[nodes.size()];
        only[index] = true;
        return only;
    }

    /**
     * Asks every node at once, on the fan-out threads, and waits until {@code decided}
     * says the counted answers so far settle the outcome, or every node answered, or the
     * node timeout (and a little slack for the threads to be scheduled) is over. Each
     * node call bounds itself by the node timeout, so the deadline only cuts off a node
     * stuck beyond it. Nodes that have not answered by then count as "no answer"; their
     * calls go on in the background and are harmless: every command is idempotent for its
     * token, and one node's commands stay in order on its connection.
     * @param decided tested with the answers so far, held-back nodes already taken out
     */
    <T> List<Vote<T>> ask(NodeCall<T> call, Predicate<List<Vote<T>>> decided) {
        return ask(all(), call, null, decided, null);
    }

    /**
     * Asks the nodes marked in {@code which}; the others' votes are "not asked". A node
     * that can be asked without blocking
     * ({@link io.github.distlock.core.NonBlockingLockBackend}) is sent the question from
     * this thread and its answer is counted as it arrives; the others are asked on the
     * fan-out threads. On the hot path (acquire, release) this saves a thread hand-over
     * per node both ways, which on a few cores shared with the nodes is most of the time
     * a vote takes.
     * @param nonBlockingCall the same question without blocking, or {@code null}; it may
     * answer {@code null} (see {@link io.github.distlock.core.NonBlockingLockBackend}),
     * and then {@code call} is asked
     * @param everyAnswer told of every node's vote, also those that come after the
     * outcome was decided ({@code late}); may be {@code null}; must not block, as it may
     * run on a node client's I/O thread
     */
    <T> List<Vote<T>> ask(boolean[] which, NodeCall<T> call, NodeCall<CompletableFuture<T>> nonBlockingCall,
            Predicate<List<Vote<T>>> decided, VoteListener<T> everyAnswer) {
        return ask(which, call, nonBlockingCall, decided, everyAnswer, 0, null);
    }

    /**
     * {@link #ask(boolean[], NodeCall, NodeCall, Predicate, VoteListener)}, but while
     * fewer than {@code answersWanted} nodes answered, answers still on their way at the
     * node timeout are waited for until their commands end by their own bound: the node
     * timeout, which Lettuce's timer enforces within a tick (100 ms), from when the
     * command left, which a fan-out thread may send later. A healthy node's answer that a
     * loaded machine delayed past the deadline then still counts.
     * @param evenIfOverdue the nodes sent their command even while one of theirs is
     * overdue; {@code null}: none
     */
    <T> List<Vote<T>> ask(boolean[] which, NodeCall<T> call, NodeCall<CompletableFuture<T>> nonBlockingCall,
            Predicate<List<Vote<T>>> decided, VoteListener<T> everyAnswer, int answersWanted, boolean[] evenIfOverdue) {
        Ballot<T> ballot = new Ballot<>(nodes.size(), votes -> decided.test(health.heldBack(votes)), everyAnswer);
        for (int i = 0; i < nodes.size(); i++) {
            if (!which[i]) {
                ballot.cast(i, Vote.Absent.NOT_ASKED.vote());
                continue;
            }
            RedlockNode node = nodes.get(i);
            int index = i;
            if (nonBlockingCall != null && askWithoutBlocking(ballot, index, health.responsiveness(i),
                    evenIfOverdue != null && evenIfOverdue[i], () -> nonBlockingCall.call(index, node))) {
                continue;
            }
            try {
                fanOut.execute(() -> {
                    Vote<T> vote;
                    try {
                        vote = new Vote.Answer<>(call.call(index, node));
                        if (nonBlockingCall != null) {
                            // A lock command (no renewal or ping, which report failures
                            // as answers): it replied.
                            health.responsiveness(index).replied();
                        }
                    }
                    catch (RuntimeException | Error ex) {
                        vote = new Vote.Failed<>(ex);
                    }
                    ballot.cast(index, vote);
                });
            }
            catch (RejectedExecutionException ex) {
                ballot.cast(i, new Vote.Failed<>(new LockBackendException("", "The Redlock backend is closed", ex)));
            }
        }
        long deadline = System.nanoTime() + nodeTimeoutNanos + TimeUnit.MILLISECONDS.toNanos(5);
        return ballot.await(deadline, answersWanted, deadline + nodeTimeoutNanos + TimeUnit.MILLISECONDS.toNanos(100));
    }

    /**
     * Sends one node its question without blocking, and casts its vote when the answer
     * comes.
     * @return {@code false} if the node cannot be asked that way now: ask it on a fan-out
     * thread
     */
    private <T> boolean askWithoutBlocking(Ballot<T> ballot, int index, NodeHealth.Responsiveness node,
            boolean evenIfOverdue, Supplier<CompletableFuture<T>> send) {
        if (!evenIfOverdue && !node.mayAsk(System.nanoTime(), nodeTimeoutNanos)) {
            ballot.cast(index, Vote.Absent.NOT_ANSWERING.vote());
            return true;
        }
        CompletableFuture<T> answer;
        try {
            answer = send.get();
        }
        catch (RuntimeException ex) {
            ballot.cast(index, new Vote.Failed<>(ex));
            return true;
        }
        if (answer == null) {
            return false;
        }
        node.sent();
        answer.whenComplete((value, failure) -> {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause()
                    : failure;
            if (cause == null) {
                node.replied();
            }
            node.ended(cause == null
                    || !(cause instanceof LockBackendException ex && ex.getCause() instanceof TimeoutException));
            ballot.cast(index, cause == null ? new Vote.Answer<>(value) : new Vote.Failed<>(cause));
        });
        return true;
    }

    /** How many answers so far say yes. */
    static <T> int count(List<Vote<T>> votes, Predicate<T> yes) {
        int count = 0;
        for (Vote<T> vote : votes) {
            if (vote.says(yes)) {
                count++;
            }
        }
        return count;
    }

    /**
     * Whether every node without a vote only ran out of time (its answer did not come
     * within the node timeout, or it was not asked as a command of it was overdue) and
     * replied to something shortly before: a node that refused, failed, is held back or
     * has been silent for long is no late answer.
     */
    <T> boolean missedOnlyForTime(List<Vote<T>> votes) {
        long now = System.nanoTime();
        for (int i = 0; i < votes.size(); i++) {
            Vote<T> vote = votes.get(i);
            if (vote.answered()) {
                continue;
            }
            boolean late = vote == Vote.Absent.NO_ANSWER_YET || vote == Vote.Absent.NOT_ANSWERING
                    || vote instanceof Vote.Failed<T> failed && (failed.failure() instanceof TimeoutException
                            || failed.failure() instanceof LockBackendException
                                    && failed.failure().getCause() instanceof TimeoutException);
            if (!late || !health.responsiveness(i).repliedWithin(now, nodeTimeoutNanos + REPLIED_RECENTLY_NANOS)) {
                return false;
            }
        }
        return true;
    }

    /** The nodes that did not answer, and why, for messages. */
    <T> String failures(List<Vote<T>> votes) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < votes.size(); i++) {
            Vote<T> vote = votes.get(i);
            if (!vote.answered()) {
                if (!text.isEmpty()) {
                    text.append("; ");
                }
                text.append(nodeNames.get(i)).append(": ").append(Vote.reason(vote));
            }
        }
        return text.toString();
    }

    /** Whether {@link #shutDown} ran. */
    boolean isShutDown() {
        return fanOut.isShutdown();
    }

    /** Stops the fan-out threads: from now on a node asked on them votes "closed". */
    void shutDown() {
        fanOut.shutdownNow();
    }

}
