package io.github.distlock.redlock;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Per node of a Redlock, whether it answers at all and whether its answers count: the two
 * reasons a node that could be asked gives no vote. Whether it answers is learnt from its
 * commands ({@link Responsiveness}); whether its answers count is the delayed-restart
 * rule ({@link NodeRestartGuard}), so that a node that forgot the locks it granted does
 * not vote for one longest lease.
 */
final class NodeHealth {

    /** Per node, what its non-blocking commands tell of whether it answers at all. */
    private final List<Responsiveness> responsiveness;

    /**
     * Per node, whether its votes count (the delayed-restart rule); {@code null}: always.
     */
    private final List<NodeRestartGuard> guards;

    /**
     * @param guards one per node, or {@code null} to count every node's votes
     */
    NodeHealth(int nodes, List<NodeRestartGuard> guards) {
        List<Responsiveness> perNode = new ArrayList<>(nodes);
        for (int i = 0; i < nodes; i++) {
            perNode.add(new Responsiveness());
        }
        this.responsiveness = List.copyOf(perNode);
        if (guards != null && guards.size() != nodes) {
            throw new IllegalArgumentException("One guard per node: " + guards.size() + " guards, " + nodes + " nodes");
        }
        this.guards = guards == null ? null : List.copyOf(guards);
    }

    /** Whether {@code node} answers, as its non-blocking commands tell. */
    Responsiveness responsiveness(int node) {
        return responsiveness.get(node);
    }

    /** Whether {@code node}'s answers count now. */
    boolean votes(int node) {
        return guards == null || guards.get(node).votes();
    }

    /**
     * Whether {@code node} answers promptly and its answers count: fit to be asked alone
     * first (the arbiter of a contended lock).
     */
    boolean isHealthy(int node, long now, long timeoutNanos) {
        Responsiveness answers = responsiveness.get(node);
        return !answers.suspect && answers.mayAsk(now, timeoutNanos) && votes(node);
    }

    /**
     * The votes with those of held-back nodes (restarted too recently, see
     * {@link NodeRestartGuard}) turned into "no answer". Asked after the replies are in:
     * a node whose connection changed while the vote ran is held back from the moment the
     * change was seen, before its reply was read.
     */
    <T> List<Vote<T>> heldBack(List<Vote<T>> votes) {
        if (guards == null) {
            return votes;
        }
        List<Vote<T>> counted = new ArrayList<>(votes.size());
        for (int i = 0; i < votes.size(); i++) {
            Vote<T> vote = votes.get(i);
            counted.add(vote.answered() && !guards.get(i).votes() ? Vote.Absent.HELD_BACK.vote() : vote);
        }
        return counted;
    }

    /**
     * Whether a node answers at all, from its non-blocking commands. A node that is
     * stopped or hung (the connection stays open, nothing comes back) would otherwise be
     * sent every acquire and release, each cancelled after the node timeout but kept by
     * the client until the node answers, and on waking it would work through them all at
     * once, starving the live nodes of the cores they share. So once a node has left a
     * command unanswered for longer than the node timeout, it is not asked again until
     * that command ends (its timeout cancels it, or the node answers): one probe per
     * timeout instead of every call, and its vote is "no answer" at once, which is what
     * waiting for it would have given. The one exception is the release that takes a late
     * grant back ({@link LateGrants}): skipped, it left the key set.
     */
    static final class Responsiveness {

        private final AtomicInteger pending = new AtomicInteger();

        /**
         * When it last answered, or when a command was sent to it while none was pending.
         */
        private volatile long heardNanos = System.nanoTime();

        /**
         * Whether its last command to end ended by its timeout: then it is only probed.
         */
        private volatile boolean suspect;

        /**
         * When it last replied (an error is no reply) to a command, on either path, or
         * when this backend was made: it counts as up until it has been silent for a
         * while.
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
         * Whether to send it a command now: not while a command of a suspect node, or one
         * older than the timeout, is pending.
         */
        boolean mayAsk(long now, long timeoutNanos) {
            int inFlight = pending.get();
            if (suspect) {
                return inFlight == 0;
            }
            return inFlight == 0 || now - heardNanos <= timeoutNanos;
        }

        /**
         * Whether it has had a command pending since before {@code since} and answered
         * nothing from then on: stopped or hung, as far as can be told yet.
         */
        boolean silentSince(long since) {
            return pending.get() > 0 && heardNanos - since < 0;
        }

        void sent() {
            if (pending.getAndIncrement() == 0 && !suspect) {
                heardNanos = System.nanoTime();
            }
        }

        /**
         * @param answered {@code false} if it ended by its timeout
         */
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

}
