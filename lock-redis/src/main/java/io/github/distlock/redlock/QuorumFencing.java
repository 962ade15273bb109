package io.github.distlock.redlock;

import java.util.List;

import io.github.distlock.core.LockKey;

/**
 * Fencing tokens over a Redlock's nodes, issued on demand as on a single node. The
 * largest of the tokens drawn on the nodes that granted the lock is not enough: holder
 * A's largest may come from a node that holder B's majority leaves out, and B's largest
 * can then be smaller. So a token is drawn on every node that still holds the lock, the
 * largest is written back to a majority (conditioned on the lock still being ours there),
 * and only then is it issued: any later holder's majority shares a node with that
 * majority and draws a larger token there.
 *
 * <p>
 * This assumes a node's counter survives until the next holder draws on it (the counter
 * lives a day; the restart rule keeps a node that forgot it from voting for one longest
 * lease) or, failing that, that the nodes' clocks agree to within the time between two
 * holders (a token is never below the server's time in microseconds, see fencing.lua).
 */
final class QuorumFencing {

    private final QuorumCall calls;

    private final NodeHealth health;

    QuorumFencing(QuorumCall calls, NodeHealth health) {
        this.calls = calls;
        this.health = health;
    }

    /**
     * Draws a token on every node that still holds the lock, writes the largest back to a
     * majority, and issues it. Returns 0 if too few nodes still hold the lock to issue a
     * token (it is lost).
     * @throws RedlockQuorumException if too few nodes answered to tell
     */
    long issue(LockKey key, String token, long ttlMillis) {
        int quorum = calls.quorum();
        // Any majority of draws will do: it meets the majority the previous token was
        // written to.
        List<Vote<Long>> drawn = health
            .heldBack(calls.ask((index, node) -> node.drawFencingToken(key, token, ttlMillis),
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
        List<Vote<Boolean>> raised = health
            .heldBack(calls.ask((index, node) -> node.raiseFencingCounter(key, token, fence, ttlMillis),
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

}
