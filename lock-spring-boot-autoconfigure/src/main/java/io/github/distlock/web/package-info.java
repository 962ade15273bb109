/**
 * Lock failures in web requests:
 * {@link io.github.distlock.web.LockProblemDetailsExceptionHandler} answers them with RFC
 * 9457 problem details (409 busy, 503 lock store unavailable, 500 lease lost, 400 invalid
 * lock key) in Spring MVC and WebFlux.
 */
package io.github.distlock.web;
