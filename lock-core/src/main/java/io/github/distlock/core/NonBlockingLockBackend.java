package io.github.distlock.core;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * A {@link LockBackend} that can also send an acquire or a release without a thread
 * waiting for the answer. A backend that asks several independent stores at once
 * (Redlock) sends to all of them from the calling thread and counts the answers as they
 * arrive, instead of parking a thread per store.
 *
 * <p>
 * The futures complete on the store client's I/O thread: whatever runs on completion must
 * not block. Each call is bounded as its blocking twin is, and fails the future with a
 * {@link io.github.distlock.LockBackendException} when its bound is over.
 *
 * <pre>{@code
 * CompletableFuture<AcquireResult> answer = node.tryAcquireAsync(key, token, 30_000);
 * if (answer == null) {
 *     answer = CompletableFuture.supplyAsync(() -> node.tryAcquire(key, token, 30_000), blockingThreads);
 * }
 * answer.whenComplete((result, failure) -> ballot.count(result, failure));
 * }</pre>
 */
public interface NonBlockingLockBackend extends LockBackend {

    /**
     * {@link #tryAcquire(LockKey, String, long)}, answered by the future.
     * @return the answer, or {@code null} if this call cannot be made without blocking
     * now (its connection is still opening, say): then call {@link #tryAcquire} on a
     * thread that may block
     */
    @Nullable CompletableFuture<AcquireResult> tryAcquireAsync(LockKey key, String token, long ttlMillis);

    /**
     * {@link #release(LockKey, String)}, answered by the future.
     * @return the answer, or {@code null} if this call cannot be made without blocking
     * now: then call {@link #release} on a thread that may block
     */
    @Nullable CompletableFuture<Boolean> releaseAsync(LockKey key, String token);

}
