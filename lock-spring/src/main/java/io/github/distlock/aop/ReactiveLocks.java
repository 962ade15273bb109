package io.github.distlock.aop;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.ReactiveAdapter;

import io.github.distlock.DistributedLock.LeaseLostAction;
import io.github.distlock.LockLostException;
import io.github.distlock.aop.DistributedLockAspectSupport.Invoker;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * Locks a method returning a reactive type, through the type's {@link ReactiveAdapter}
 * (Spring's {@link org.springframework.core.ReactiveAdapterRegistry}): Reactor's
 * {@code Mono} and {@code Flux}, a {@code Publisher}, and whatever else the registry
 * adapts (RxJava, Mutiny, ...). Nothing happens until subscription; each subscription
 * then acquires the lock, invokes the method and holds the lock until the publisher
 * terminates or is cancelled. Acquiring and releasing block (a Redis round trip, perhaps
 * a wait), so they run on {@link Schedulers#boundedElastic()}, never on the subscriber's
 * thread.
 *
 * <p>
 * Only referenced when the operation's result is reactive, which {@link LockOperation}
 * recognises only with Reactor present, so Reactor stays optional.
 */
final class ReactiveLocks {

    private ReactiveLocks() {
    }

    /**
     * @param invoker invokes the method; called once per subscription, after the lock is
     * held
     * @return the method's declared reactive type, made by its adapter from the locked
     * publisher
     */
    static Object lockOnSubscribe(DistributedLockAspectSupport support, Invoker invoker, LockOperation operation,
            @Nullable Object[] args, @Nullable Object target) {
        ReactiveAdapter adapter = operation.getReactiveAdapter();
        Flux<Object> locked = Flux.defer(() -> {
            // Per subscription. Reactor wraps an error raised by the completion cleanup,
            // so a lease lost by then is
            // kept here and signalled after the cleanup instead.
            AtomicReference<@Nullable LockLostException> lostAtCompletion = new AtomicReference<>();
            return Flux
                .usingWhen(acquisition(support, operation, args, target),
                        frame -> body(support, invoker, frame, adapter),
                        frame -> completed(support, frame, lostAtCompletion),
                        (frame, failure) -> failed(support, frame, failure), frame -> cancelled(support, frame))
                .concatWith(Mono.defer(() -> {
                    LockLostException lost = lostAtCompletion.get();
                    return (lost != null ? Mono.error(lost) : Mono.empty());
                }));
        });
        if (!adapter.isMultiValue()) {
            // Mono.usingWhen would emit the value before the release; as a Flux the value
            // waits for the completion,
            // which comes after the release and which a lost lease turns into an error,
            // as for a CompletionStage.
            return adapter.fromPublisher(locked.singleOrEmpty()
                .onErrorResume(LockUnavailableException.class,
                        unavailable -> Mono.from(fallback(support, operation, args, unavailable, adapter))));
        }
        return adapter.fromPublisher(locked.onErrorResume(LockUnavailableException.class,
                unavailable -> Flux.from(fallback(support, operation, args, unavailable, adapter))));
    }

    /**
     * Acquires on a bounded-elastic thread. A subscriber that cancels while the
     * acquisition is under way must not leave the lock behind (the watchdog would renew
     * it for ever), whether the cancel comes before the lock is taken, while it is
     * delivered, or after.
     */
    private static Mono<LockFrame> acquisition(DistributedLockAspectSupport support, LockOperation operation,
            @Nullable Object[] args, @Nullable Object target) {
        return Mono.<LockFrame>create(sink -> {
            AtomicBoolean cancelled = new AtomicBoolean();
            AtomicReference<@Nullable LockFrame> acquired = new AtomicReference<>();
            sink.onCancel(() -> {
                cancelled.set(true);
                LockFrame frame = acquired.get();
                if (frame != null) {
                    support.exitQuietly(frame);
                }
            });
            LockFrame frame;
            try {
                frame = support.enter(operation, args, target, true);
            }
            catch (Throwable ex) {
                if (!cancelled.get()) {
                    sink.error(ex);
                }
                return;
            }
            acquired.set(frame);
            if (cancelled.get()) {
                support.exitQuietly(frame);
                return;
            }
            sink.success(frame);
        })
            .subscribeOn(Schedulers.boundedElastic())
            // A frame dropped by a cancel racing with its delivery.
            .doOnDiscard(LockFrame.class, support::exitQuietly);
    }

    /**
     * Invokes the method under the lock; nested calls made while it assembles its
     * publisher join the lock.
     */
    private static Publisher<Object> body(DistributedLockAspectSupport support, Invoker invoker, LockFrame frame,
            ReactiveAdapter adapter) {
        HeldLocks held = HeldLocks.current();
        frame.register(held, false);
        Object result;
        try {
            result = invoker.invoke();
        }
        catch (Throwable ex) {
            return Mono.error(ex);
        }
        finally {
            frame.unregister(held, false);
        }
        Publisher<Object> publisher = (result != null ? adapter.toPublisher(result) : Mono.empty());
        if (frame.operation().getLeaseLostAction() != LeaseLostAction.INTERRUPT) {
            return publisher;
        }
        // No thread to interrupt: the work is cancelled instead, and the publisher ends
        // with the loss. The trigger
        // emits a value because takeUntilOther cancels the source only on a value, not on
        // an error.
        AtomicReference<@Nullable LockLostException> loss = new AtomicReference<>();
        Sinks.One<Boolean> lost = Sinks.one();
        frame.onLost(handle -> {
            loss.compareAndSet(null, support.cancelledByLoss(frame, handle));
            // Off the watchdog's thread: the cancellation and the error run subscriber
            // code.
            Schedulers.boundedElastic().schedule(() -> lost.tryEmitValue(Boolean.TRUE));
        });
        return Flux.from(publisher).takeUntilOther(lost.asMono()).concatWith(Mono.defer(() -> {
            LockLostException cause = loss.get();
            return (cause != null ? Mono.error(cause) : Mono.empty());
        }));
    }

    /**
     * Releases; a lease lost meanwhile is kept, to end the publisher with a
     * {@link LockLostException}.
     */
    private static Mono<Void> completed(DistributedLockAspectSupport support, LockFrame frame,
            AtomicReference<@Nullable LockLostException> lostAtCompletion) {
        return Mono.<Void>fromRunnable(() -> lostAtCompletion.set(support.exit(frame)))
            .subscribeOn(Schedulers.boundedElastic());
    }

    private static Mono<Void> failed(DistributedLockAspectSupport support, LockFrame frame, Throwable failure) {
        return Mono.<Void>fromRunnable(() -> DistributedLockAspectSupport.suppress(failure, support.exit(frame)))
            .subscribeOn(Schedulers.boundedElastic());
    }

    private static Mono<Void> cancelled(DistributedLockAspectSupport support, LockFrame frame) {
        return Mono.<Void>fromRunnable(() -> support.exitQuietly(frame)).subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * The failure strategy as a publisher: a handler may return the method's reactive
     * type, a publisher, or a plain value to emit.
     */
    private static Publisher<Object> fallback(DistributedLockAspectSupport support, LockOperation operation,
            @Nullable Object[] args, LockUnavailableException unavailable, ReactiveAdapter adapter) {
        Object value;
        try {
            value = support.fallback(operation, args, unavailable.getKey(), unavailable.getCause());
        }
        catch (Throwable ex) {
            return Mono.error(ex);
        }
        if (value == null) {
            return Mono.empty();
        }
        if (adapter.getReactiveType().isInstance(value)) {
            return adapter.toPublisher(value);
        }
        return (value instanceof Publisher<?> publisher ? objects(publisher) : Mono.just(value));
    }

    /**
     * The method's publisher, of whatever element type, as the lock's result publisher.
     */
    @SuppressWarnings("unchecked")
    private static Publisher<Object> objects(Publisher<?> publisher) {
        return (Publisher<Object>) publisher;
    }

}
