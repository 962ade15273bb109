package io.github.distlock;

import java.util.function.Consumer;

/**
 * One acquisition of a distributed lock. The handle owns the lock, not the thread that took it:
 * any thread may release it, so it works with executors, {@code CompletableFuture} chains and
 * virtual threads.
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
     * acquisitions, including after the previous holder's lease expired. Pass it to the protected
     * resource and let it reject writes that carry an older token: that is what keeps a holder
     * that was paused longer than its TTL from doing damage.
     */
    long fencingToken();

    /**
     * Whether this handle still holds the lock as far as this JVM knows: false once it was
     * released, once its lease ran out, or once the watchdog found it lost (key deleted, taken
     * over, or Redis unreachable until the lease ran out). Costs no Redis round trip.
     */
    boolean isHeld();

    /**
     * Whether the watchdog found this lease lost while it was held: the key was deleted or taken
     * over, or Redis stayed unreachable until the lease ran out. A fixed lease (watchdog off) that
     * simply ran out is not reported here; {@link #isHeld()} and {@link #release()} tell that.
     */
    boolean isLost();

    /**
     * Registers a callback for when the watchdog finds this lease lost, so the work it guards can
     * stop instead of carrying on unprotected. It runs at most once, on the watchdog's thread, and
     * must return quickly (flag, interrupt, cancel). Registered after the loss, it runs at once on
     * the calling thread.
     *
     * <pre>{@code
     * LockHandle lock = lockService.lock("import", null, null);
     * Thread worker = Thread.currentThread();
     * lock.onLost(lost -> worker.interrupt());
     * }</pre>
     *
     * @return this handle
     */
    LockHandle onLost(Consumer<? super LockHandle> listener);

    /**
     * Releases the lock with a compare-and-delete: the key is deleted only if it still holds this
     * acquisition's token, so another owner's lock is never removed. Renewal stops first.
     * Idempotent: only the first call can return {@code true}.
     *
     * @return {@code true} if this call removed our own lock; {@code false} if it had already been
     *         released, or had expired (and perhaps been taken by someone else)
     * @throws LockBackendException if Redis could not be reached; the lease then expires on its own
     */
    boolean release();

    /** Same as {@link #release()}, for try-with-resources; throws no checked exception. */
    @Override
    void close();
}
