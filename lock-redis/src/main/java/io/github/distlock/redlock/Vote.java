package io.github.distlock.redlock;

import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

import io.github.distlock.core.LockBackend.AcquireResult;

/**
 * One node's vote in a Redlock's quorum call: its answer, the failure of its call, or the
 * reason of our own why it has none. Only an {@link Answer} counts.
 */
sealed interface Vote<T> permits Vote.Answer, Vote.Failed, Vote.Absent {

    /** Whether the node answered: only then does its vote count. */
    default boolean answered() {
        return this instanceof Answer;
    }

    /** Whether the node answered, and its answer passes {@code yes}. */
    default boolean says(Predicate<? super T> yes) {
        return this instanceof Answer<T> answer && yes.test(answer.value());
    }

    /** Whether the node granted the lock. */
    static boolean granted(Vote<AcquireResult> vote) {
        return vote.says(AcquireResult::acquired);
    }

    /** Whether the node answered that the lock is taken: it holds nothing of ours. */
    static boolean refused(Vote<AcquireResult> vote) {
        return vote.says(result -> !result.acquired());
    }

    /**
     * Why a vote that is not an answer has none, in words for messages.
     * @param noAnswer a {@link Failed} or {@link Absent} vote
     */
    static String reason(Vote<?> noAnswer) {
        if (noAnswer instanceof Failed<?> failed) {
            Throwable failure = failed.failure();
            return failure instanceof TimeoutException ? Absent.NO_ANSWER_YET.reason
                    : String.valueOf(failure.getMessage());
        }
        return ((Absent) noAnswer).reason;
    }

    /** The node's answer. */
    record Answer<T>(T value) implements Vote<T> {
    }

    /**
     * The node's call failed: the node timeout, a dropped connection, an error reply, a
     * closed backend.
     */
    record Failed<T>(Throwable failure) implements Vote<T> {
    }

    /**
     * No answer, for a reason of the Redlock's own. Shared constants rather than
     * exceptions: a release of a late grant asks one node and marks the others "not
     * asked", which must not cost a stack trace each.
     */
    enum Absent implements Vote<Object> {

        /** The question was not put to this node. */
        NOT_ASKED("not asked"),
        /** Its answer was not in when the outcome was read. */
        NO_ANSWER_YET("no answer within the node timeout"),
        /**
         * Not asked, as it left a command unanswered for longer than the node timeout
         * (see {@link NodeHealth.Responsiveness}).
         */
        NOT_ANSWERING("not asked: it left a command unanswered for longer than the node timeout, and is asked again "
                + "once that command has ended"),
        /** It answered, but its answers do not count now ({@link NodeRestartGuard}). */
        HELD_BACK("restarted recently or not yet checked since it reconnected: its votes are held back");

        private final String reason;

        Absent(String reason) {
            this.reason = reason;
        }

        /** This reason, in words for messages. */
        String reason() {
            return reason;
        }

        /** This reason as a vote of any type: it carries no value, so it is one. */
        @SuppressWarnings("unchecked")
        <T> Vote<T> vote() {
            return (Vote<T>) (Vote<?>) this;
        }

    }

}
