package io.github.distlock.redlock;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.InspectableLockBackend.LockState;
import io.github.distlock.core.InspectableLockBackend.Reachability;
import io.github.distlock.core.LockBackend.AcquireResult;
import io.github.distlock.core.LockBackend.LeaseRenewal;
import io.github.distlock.core.LockBackend.RenewalOutcomes;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.LettuceLockBackend;

/**
 * What a Redlock asks of one of its nodes. The Redlock's own commands (the arbiter's
 * wake-up line, a release that sends its release hint from its script) exist on a Redis
 * node only: behind this interface the Redlock asks for them without knowing the store,
 * and a node without them (a custom store, a test's wrapper) does the plain thing
 * instead.
 *
 * <p>
 * Each call is bounded by the node timeout and may throw
 * {@link io.github.distlock.LockBackendException}, as
 * {@link io.github.distlock.core.LockBackend} says. An {@code ...Async} call answers
 * {@code null} if it cannot be sent without blocking now, as
 * {@link io.github.distlock.core.NonBlockingLockBackend} says.
 */
interface RedlockNode extends AutoCloseable {

    /**
     * A Redis node with the Redlock's own commands, or any other fencing backend with the
     * plain ones.
     */
    static RedlockNode of(FencingLockBackend node) {
        return node instanceof LettuceLockBackend redis ? new RedisRedlockNode(redis)
                : new FencingBackendRedlockNode(node);
    }

    /** Takes the lock if it is free: the vote of an ordinary round. */
    AcquireResult acquire(LockKey key, String token, long ttlMillis);

    /** {@link #acquire} without blocking, or {@code null}. */
    CompletableFuture<AcquireResult> acquireAsync(LockKey key, String token, long ttlMillis);

    /**
     * Takes the lock if it is free, and if not, puts instance {@code waiterId} in the
     * key's wake-up line on this node for {@code aliveMillis} (see
     * {@link RedlockReleaseHints}). A node without wake-up lines only takes the lock.
     */
    AcquireResult acquireOrWait(LockKey key, String token, long ttlMillis, String waiterId, long aliveMillis);

    /** {@link #acquireOrWait} without blocking, or {@code null}. */
    CompletableFuture<AcquireResult> acquireOrWaitAsync(LockKey key, String token, long ttlMillis, String waiterId,
            long aliveMillis);

    /** Deletes the lock if it holds {@code token}, with no release hint. */
    boolean release(LockKey key, String token);

    /** {@link #release} without blocking, or {@code null}. */
    CompletableFuture<Boolean> releaseAsync(LockKey key, String token);

    /** Whether {@link #releaseWithHint} publishes the hint from the node itself. */
    boolean sendsReleaseHints();

    /**
     * {@link #release}, and if it deleted the lock, publishes {@code releaseHint} from
     * the same script; a node that does not {@link #sendsReleaseHints send hints} only
     * releases.
     */
    boolean releaseWithHint(LockKey key, String token, ReleaseHint releaseHint);

    /** {@link #releaseWithHint} without blocking, or {@code null}. */
    CompletableFuture<Boolean> releaseWithHintAsync(LockKey key, String token, ReleaseHint releaseHint);

    /**
     * Whether {@link #releaseAfter} works on this node: a Redis node's does, another
     * store's if it is a {@link io.github.distlock.core.LeaseAdjustingLockBackend}.
     */
    boolean shortensLeases();

    /**
     * As {@link io.github.distlock.core.LeaseAdjustingLockBackend#releaseAfter}, with
     * {@code remainingMillis > 0}: compare-and-shorten, on this node alone.
     * @throws UnsupportedOperationException if the node cannot ({@link #shortensLeases})
     */
    boolean releaseAfter(LockKey key, String token, long remainingMillis);

    /** As {@link io.github.distlock.core.LockBackend#renew}. */
    void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes);

    /**
     * As {@link FencingLockBackend#issueFencingToken}: a token drawn on this node alone.
     */
    long drawFencingToken(LockKey key, String token, long ttlMillis);

    /**
     * As {@link io.github.distlock.redis.RaisableFencingLockBackend#raiseFencingCounter}.
     */
    boolean raiseFencingCounter(LockKey key, String token, long fencingToken, long ttlMillis);

    /** As {@link io.github.distlock.core.InspectableLockBackend#inspect}. */
    LockState inspect(LockKey key);

    /**
     * As {@link io.github.distlock.core.InspectableLockBackend#ping}: one node's answer.
     */
    Reachability ping();

    /**
     * One release's hint ({@link RedlockReleaseHints}).
     *
     * @param channel the hint channel
     * @param hint {@code <release id>:<lock key>}
     * @param toLineHead whether to send it to the head of the key's wake-up line on the
     * node, and to {@code channel} only if nobody there listens; {@code false}: to
     * {@code channel}
     */
    record ReleaseHint(String channel, String hint, boolean toLineHead) {
    }

}
