package io.github.distlock;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.function.Consumer;

/**
 * One acquisition of a distributed lock. The handle owns the lock, not the thread that
 * took it: any thread may release it, so it works with executors,
 * {@code CompletableFuture} chains and virtual threads.
 *
 * <pre>{@code
 * try (LockHandle lock = lockService.lock("account:" + id, null, null)) {
 *     ledger.post(entry, lock.fencingToken());   // the resource rejects tokens older than the last one it saw
 * }
 * }</pre>
 */
public interface LockHandle extends AutoCloseable {

    /** The key as the caller gave it, without the configured prefix. */
    String key();

    /**
     * A number greater than zero that strictly increases for this key across successive
     * holders, including after the previous holder's lease expired. Pass it to the
     * protected resource and let it reject writes that carry an older token: that is what
     * keeps a holder that was paused longer than its TTL from doing damage.
     *
     * <p>
     * <b>The first call may write to the store.</b> A token is issued once per
     * acquisition and then returned as is. A lock that was free when asked for gets its
     * token on this method's first call: a write to the store (one round trip to Redis,
     * which draws the token only if the lock still holds this handle's token), so that
     * first call can block for up to the operation timeout and can fail. To have no write
     * here, ask for the token with the lock, in the same round trip, through
     * {@link LockRequest#withFencingToken()}; a lock that was handed over after a wait
     * already has one. Either way the token orders this holder after every earlier holder
     * of the key and before every later one. {@link #issuedFencingToken()} never writes.
     *
     * <pre>{@code
     * try (LockHandle lock = lockService.lock("account:" + id, null, null)) {
     *     long fence = lock.fencingToken();   // before the first write
     *     accounts.update(id, balance, fence); // ... WHERE id = ? AND fence < ?
     * }
     * }</pre>
     * @throws LockLostException if the token was not issued yet and the lock no longer
     * holds this handle's token (its lease ran out, or another owner took it): no token
     * can be drawn for it, and another owner may be running the guarded work
     * @throws IllegalStateException if the token was not issued yet and the handle was
     * released
     * @throws LockBackendException if the token was not issued yet and the store could
     * not be reached
     * @throws UnsupportedOperationException if the lock's backend issues no fencing
     * tokens (a custom backend that does not implement {@code FencingLockBackend}; the
     * Redis backends do)
     */
    long fencingToken();

    /**
     * The fencing token if this acquisition has one already, without asking Redis: for
     * logs and reports about a lock that may be gone. Empty while no token has been
     * issued; see {@link #fencingToken()}.
     */
    OptionalLong issuedFencingToken();

    /**
     * Whether this handle still holds the lock as far as this JVM knows: false once it
     * was released, once its lease ran out, or once the watchdog found it lost (key
     * deleted, taken over, or Redis unreachable until the lease ran out). Costs no Redis
     * round trip.
     */
    boolean isHeld();

    /**
     * Whether the watchdog found this lease lost while it was held: the key was deleted
     * or taken over, or Redis stayed unreachable until the lease ran out. A fixed lease
     * (watchdog off) that simply ran out is not reported here; {@link #isHeld()} and
     * {@link #release()} tell that.
     */
    boolean isLost();

    /**
     * Registers a callback for when the watchdog finds this lease lost, so the work it
     * guards can stop instead of carrying on unprotected. It runs at most once, on the
     * watchdog's thread, and must return quickly (flag, interrupt, cancel). Registered
     * after the loss, it runs at once on the calling thread.
     *
     * <pre>{@code
     * LockHandle lock = lockService.lock("import", null, null);
     * Thread worker = Thread.currentThread();
     * lock.onLost(lost -> worker.interrupt());
     * }</pre>
     * @return this handle
     */
    LockHandle onLost(Consumer<? super LockHandle> listener);

    /**
     * Sets the lock's remaining lease to {@code ttl} from now, longer or shorter than it
     * was, only if the lock still holds this handle's token. A watchdog that renews this
     * lease renews it to {@code ttl} from then on. Use it for work that learns how long
     * it will take, or for a fixed lease (watchdog off) that needs more time:
     *
     * <pre>{@code
     * try (LockHandle lock = lockService.lock(LockRequest.of("import").withWatchdog(false))) {
     *     for (Batch batch : batches) {
     *         if (!lock.extend(Duration.ofMinutes(2))) {
     *             throw new IllegalStateException("lost the import lock");   // another owner may run now
     *         }
     *         importer.run(batch);
     *     }
     * }
     * }</pre>
     * @param ttl the new remaining lease, from 1 ms to 36500 days
     * @return {@code true} if the lease was set; {@code false} if the lock was released
     * or no longer holds this handle's token (its lease ran out, or another owner took
     * it): then {@link #isHeld()} is false too
     * @throws LockBackendException if the store could not be reached; the lease is then
     * counted, in this JVM, as the shorter of the old and the new one
     * @throws UnsupportedOperationException if the lock's backend cannot set a lease
     * ({@link LockService#supportsMinHold()} is false)
     * @throws IllegalArgumentException if {@code ttl} is out of range
     */
    default boolean extend(Duration ttl) {
        throw new UnsupportedOperationException("This lock handle (" + getClass().getName() + ") cannot extend its "
                + "lease; use a lock service whose supportsMinHold() is true.");
    }

    /**
     * Releases the lock but leaves it held for {@code keepFor} more: renewal stops, and
     * the lease is cut to {@code keepFor} (never lengthened; a shorter lease left ends
     * sooner), so the lock expires then, unless a minimum hold of the request ends later.
     * Like {@link #release()}, a compare on this handle's own token: another owner's lock
     * is never touched. For a minimum hold that is only known at the end, such as
     * ShedLock's {@code lockAtLeastFor} after an extension:
     *
     * <pre>{@code
     * Duration ran = Duration.between(started, Instant.now());
     * lock.releaseAfter(Duration.ofMinutes(1).minus(ran));   // nobody runs the job again within the minute
     * }</pre>
     * @param keepFor how long the lock stays held from now; zero or negative releases it
     * at once, as {@link #release()} does
     * @return as {@link #release()}: {@code true} if this call released our own lock
     * @throws UnsupportedOperationException if {@code keepFor} is positive and the lock's
     * backend cannot shorten a lease ({@link LockService#supportsMinHold()} is false)
     */
    default boolean releaseAfter(Duration keepFor) {
        if (keepFor.isNegative() || keepFor.isZero()) {
            return release();
        }
        throw new UnsupportedOperationException("This lock handle (" + getClass().getName() + ") cannot keep a lock "
                + "held after its release; use a lock service whose supportsMinHold() is true.");
    }

    /**
     * Releases the lock with a compare-and-delete: the key is deleted only if it still
     * holds this acquisition's token, so another owner's lock is never removed. Renewal
     * stops first. Idempotent: only the first call can return {@code true}.
     *
     * <p>
     * With a minimum hold ({@link LockRequest#withMinHold}) that has not passed yet, the
     * lock is not deleted: its lease is cut to the rest of the minimum hold (never
     * lengthened), and it expires then; this returns {@code true} all the same. The
     * handle counts as released at once.
     * @return {@code true} if this call removed our own lock; {@code false} if it had
     * already been released, or had expired (and perhaps been taken by someone else)
     * @throws LockBackendException if Redis could not be reached; the lease then expires
     * on its own
     */
    boolean release();

    /**
     * Same as {@link #release()}, for try-with-resources; throws no checked exception.
     */
    @Override
    void close();

}
