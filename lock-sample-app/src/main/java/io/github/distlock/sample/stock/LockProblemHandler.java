package io.github.distlock.sample.stock;

import io.github.distlock.LockBackendException;
import io.github.distlock.LockTimeoutException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Turns lock failures into RFC 9457 problem responses: a lock that stays busy is a 409 the client
 * may retry, an unreachable lock store is a 503. In both cases the guarded method did not run, so
 * nothing was sold and a retry is safe.
 */
@RestControllerAdvice
public class LockProblemHandler {

    private static final Logger log = LoggerFactory.getLogger(LockProblemHandler.class);

    /** Another request held the lock for longer than the wait time. */
    @ExceptionHandler(LockTimeoutException.class)
    public ResponseEntity<ProblemDetail> lockTimeout(LockTimeoutException e) {
        // The exception's own message tells operators to tune the wait time; the client gets a plain statement.
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT,
                "Another request is working on '" + e.getKey() + "'; nothing was changed. Try again.");
        problem.setTitle("Resource busy");
        problem.setProperty("lockKey", e.getKey());
        if (e.getWaitTime() != null) {
            problem.setProperty("waitedMillis", e.getWaitTime().toMillis());
        }
        return ResponseEntity.status(HttpStatus.CONFLICT).header(HttpHeaders.RETRY_AFTER, "1").body(problem);
    }

    /** Redis could not be reached, so it is unknown whether the lock is free. */
    @ExceptionHandler(LockBackendException.class)
    public ResponseEntity<ProblemDetail> lockBackend(LockBackendException e) {
        log.warn("Lock store unavailable for '{}'", e.getKey(), e);
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
                "The lock store could not be reached; nothing was changed. Try again later.");
        problem.setTitle("Lock store unavailable");
        problem.setProperty("lockKey", e.getKey());
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).header(HttpHeaders.RETRY_AFTER, "5").body(problem);
    }
}
