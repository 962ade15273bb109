package io.github.distlock.redlock;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * The votes of one question to every node of a Redlock, as they come in, and the wait for
 * them: the asking thread is woken once, when the votes so far settle the outcome, rather
 * than once per node. A lock and condition rather than {@code synchronized}, so that a
 * virtual thread waiting here does not pin its carrier.
 */
final class Ballot<T> {

    private final List<Vote<T>> votes;

    private final Predicate<List<Vote<T>>> decided;

    private final VoteListener<T> everyAnswer;

    private int cast;

    /** Whether every vote is in or {@link #decided} said the votes so far settle it. */
    private boolean settled;

    /** Whether the outcome was read: votes cast from then on are late. */
    private boolean closed;

    /**
     * Whether the waiter is past its deadline, waiting for answers on their way: every
     * vote wakes it.
     */
    private boolean overtime;

    private final ReentrantLock lock = new ReentrantLock();

    private final Condition changed = lock.newCondition();

    /**
     * @param decided whether the votes so far settle the outcome; asked as each vote
     * comes in, on the thread that casts it, so the waiting caller is woken once, when it
     * is settled, rather than once per node
     * @param everyAnswer told of every vote, late ones included; may be {@code null}
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
     * The votes once settled or past the deadline; missing ones are "no answer yet".
     * While fewer than {@code answersWanted} nodes answered and answers are still on
     * their way, past the deadline too, until {@code lastDeadlineNanos}.
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
                    // Node calls are not interruptible (LockBackend's contract); keep the
                    // flag for later.
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

    /**
     * Whether fewer than {@code answersWanted} nodes answered, and some answer is not in
     * yet.
     */
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

    /**
     * Whether {@code vote}, from a snapshot, is of a node whose answer was not in yet.
     */
    static boolean isPending(Vote<?> vote) {
        return vote == Vote.Absent.NO_ANSWER_YET;
    }

    private List<Vote<T>> snapshot() {
        // A node whose answer is not in is asked for on every vote cast: the shared
        // constant.
        Vote<T> noAnswerYet = Vote.Absent.NO_ANSWER_YET.vote();
        List<Vote<T>> copy = new ArrayList<>(votes.size());
        for (Vote<T> vote : votes) {
            copy.add(vote != null ? vote : noAnswerYet);
        }
        return copy;
    }

}
