package io.github.distlock.aop;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;

import io.github.distlock.DistributedLock.LeaseLostAction;
import io.github.distlock.LockLostException;

/**
 * Holds the locks of a method returning a {@link CompletionStage} until the stage
 * completes, as {@link ReactiveLocks} does for reactive types. Needs nothing beyond the
 * JDK, so stages are followed without Reactor on the classpath.
 */
final class CompletionStageLocks {

    private CompletionStageLocks() {
    }

    /**
     * Releases when the stage completes, on whichever thread completes it. Returns a
     * future that completes after the release, with the stage's outcome, or with
     * {@link LockLostException} if the lease was lost meanwhile.
     */
    static Object follow(DistributedLockAspectSupport support, LockFrame frame, CompletionStage<?> stage) {
        LockOperation operation = frame.operation();
        if (operation.getLeaseLostAction() == LeaseLostAction.INTERRUPT && stage instanceof Future<?> future) {
            // The work runs elsewhere by now: cancelling it is the asynchronous form of
            // the interrupt. Not on the
            // watchdog's thread, which the cancellation's callbacks (and the release)
            // would keep from renewing.
            frame.onLost(lost -> ForkJoinPool.commonPool().execute(() -> future.cancel(true)));
        }
        if (!operation.isResultReplaceable()) {
            // A custom stage type that a CompletableFuture would not fit: follow it, but
            // it keeps its own outcome.
            stage.whenComplete((value, failure) -> support.exitQuietly(frame));
            return stage;
        }
        CompletableFuture<Object> completion = new CompletableFuture<>();
        stage.whenComplete((value, failure) -> {
            LockLostException lost;
            try {
                lost = support.exit(frame);
            }
            catch (RuntimeException | Error ex) {
                completion.completeExceptionally(ex);
                return;
            }
            if (failure != null) {
                DistributedLockAspectSupport.suppress(unwrap(failure), lost);
                completion.completeExceptionally(failure);
            }
            else if (lost != null) {
                completion.completeExceptionally(lost);
            }
            else {
                completion.complete(value);
            }
        });
        if (stage instanceof Future<?> future) {
            // A caller that cancels what it got back cancels the method's stage, so the
            // work stops and the lock goes.
            completion.whenComplete((value, failure) -> {
                if (completion.isCancelled()) {
                    future.cancel(true);
                }
            });
        }
        return completion;
    }

    private static Throwable unwrap(Throwable failure) {
        return (failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure);
    }

}
