/**
 * The {@link io.github.distlock.DistributedLock @DistributedLock} interceptor, modelled on Spring's cache
 * annotations: {@link io.github.distlock.aop.AnnotationLockOperationSource} parses and validates each annotated
 * method once, {@link io.github.distlock.aop.LockKeyResolver} turns the key expression into a lock name per call,
 * and {@link io.github.distlock.aop.DistributedLockInterceptor} acquires through
 * {@link io.github.distlock.LockService}, invokes the method and releases.
 */
package io.github.distlock.aop;
