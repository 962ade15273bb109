package io.github.distlock.redlock;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.LockKey;

/**
 * Fewer than a majority of the Redlock nodes answered, so nothing can be decided: the
 * lock is neither granted nor refused. Thrown by acquisitions (after giving back whatever
 * the answering nodes granted) and by releases (which the lock service then retries in
 * the background). Like every {@link LockBackendException}, the guarded method does not
 * run.
 *
 * <pre>{@code
 * try {
 *     lockService.lock("order:42");
 * }
 * catch (RedlockQuorumException ex) {
 *     log.warn("{} of {} lock nodes answered", ex.answered(), ex.nodes());
 * }
 * }</pre>
 */
public class RedlockQuorumException extends LockBackendException {

    private final int answered;

    private final int nodes;

    private final int quorum;

    /**
     * Whether the nodes that did not answer are up and only answered too late (see
     * {@link RedlockBackend#isTransient}).
     */
    private final boolean late;

    RedlockQuorumException(LockKey key, String operation, int answered, int nodes, int quorum, String failures) {
        this(key, operation, answered, nodes, quorum, failures, false);
    }

    RedlockQuorumException(LockKey key, String operation, int answered, int nodes, int quorum, String failures,
            boolean late) {
        super(key.name(),
                "Only " + answered + " of " + nodes + " Redlock nodes answered the " + operation + " of lock "
                        + key.printableName() + ", and " + quorum + " are needed for a majority (" + failures
                        + "). Check that a majority of distributed-lock.redlock.nodes is up and answers within "
                        + "distributed-lock.redlock.node-timeout.",
                null);
        this.answered = answered;
        this.nodes = nodes;
        this.quorum = quorum;
        this.late = late;
    }

    /** Whether a caller with wait time left may simply try again. */
    boolean late() {
        return late;
    }

    /** How many nodes answered. */
    public int answered() {
        return answered;
    }

    /** How many nodes there are. */
    public int nodes() {
        return nodes;
    }

    /** How many answers a decision needs: a majority. */
    public int quorum() {
        return quorum;
    }

}
