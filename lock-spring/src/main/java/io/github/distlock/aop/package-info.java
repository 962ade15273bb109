/**
 * The {@link io.github.distlock.DistributedLock @DistributedLock} interceptor, modelled
 * on Spring's cache annotations:
 * {@link io.github.distlock.aop.AnnotationLockOperationSource} parses and validates each
 * annotated method once, {@link io.github.distlock.aop.LockKeyResolver} turns the key
 * expressions into lock names per call, and
 * {@link io.github.distlock.aop.DistributedLockInterceptor} (Spring proxies) or
 * {@link io.github.distlock.aop.AnnotationDistributedLockAspect} (AspectJ weaving)
 * acquires through {@link io.github.distlock.LockService}, invokes the method and
 * releases.
 *
 * <p>
 * {@link io.github.distlock.aop.DistributedLockAspectSupport} holds the per-call logic:
 * nested calls on a key the thread already holds join that hold (a small per-thread
 * registry), several keys are taken together with {@code LockService.lockAll}, a lost
 * lease becomes a {@link io.github.distlock.LockLostException}, a lock that cannot be had
 * goes to the method's failure strategy (resolved once), and for a
 * {@code CompletionStage} or a reactive result (through Spring's
 * {@code ReactiveAdapterRegistry}) the lock follows the result rather than the method.
 * How a method's result is followed is decided once, in its
 * {@link io.github.distlock.aop.LockOperation}.
 *
 * <p>
 * Non-null unless marked {@code @Nullable}.
 */
@NullMarked
package io.github.distlock.aop;

import org.jspecify.annotations.NullMarked;
