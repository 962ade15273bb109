package io.github.distlock.web;

import java.net.URI;
import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.github.distlock.InvalidLockKeyException;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockKeys;
import io.github.distlock.LockLostException;
import io.github.distlock.LockTimeoutException;

/**
 * Answers lock failures in a web request with RFC 9457 problem details, for Spring MVC
 * and WebFlux alike:
 *
 * <ul>
 * <li>{@link LockTimeoutException}: {@code 409 Conflict} with {@code Retry-After}.
 * Another request holds the lock; the guarded method did not run, so a retry is safe and
 * likely to succeed soon.</li>
 * <li>{@link LockBackendException} and any other {@link LockAcquisitionException}:
 * {@code 503 Service Unavailable} with {@code Retry-After}. The lock store did not
 * answer; the method did not run.</li>
 * <li>{@link LockLostException}: {@code 500 Internal Server Error}, no
 * {@code Retry-After}. The method ran, but for part of the time without its lock, so the
 * outcome is uncertain and a blind retry could repeat the work.</li>
 * <li>{@link InvalidLockKeyException}: {@code 400 Bad Request}, no {@code Retry-After}.
 * The key built from the request is blank or longer than
 * {@code distributed-lock.max-key-length}; the method did not run, and the same request
 * would fail again.</li>
 * </ul>
 *
 * <p>
 * The body names the lock key, stripped of control characters and shortened, never the
 * exception's message (it is written for operators and may name Redis hosts or methods)
 * nor any token. Nothing is logged above WARN and no stack trace at all: a busy lock is
 * ordinary contention and a bad key the client's mistake (both DEBUG), an unreachable
 * store or a lost lease is one WARN line.
 *
 * <p>
 * Ordered last among controller advice, so any {@code @ExceptionHandler} of the
 * application for these exceptions wins. To change the answers, extend this class and
 * declare it as a bean: the auto-configured one then backs off. Overriding a handler
 * method keeps its {@code @ExceptionHandler} mapping.
 */
@RestControllerAdvice
public class LockProblemDetailsExceptionHandler implements Ordered {

    /** The problem type of a lock held by someone else past the wait time (409). */
    public static final URI LOCK_BUSY = URI.create("https://distlock.github.io/problems/lock-busy");

    /**
     * The problem type of a lock that could not be asked for: the lock store is
     * unavailable (503).
     */
    public static final URI LOCK_UNAVAILABLE = URI.create("https://distlock.github.io/problems/lock-unavailable");

    /** The problem type of a lease lost while the request ran (500). */
    public static final URI LOCK_LOST = URI.create("https://distlock.github.io/problems/lock-lost");

    /**
     * The problem type of a lock key built from the request that cannot name a lock:
     * blank or too long (400).
     */
    public static final URI INVALID_LOCK_KEY = URI.create("https://distlock.github.io/problems/invalid-lock-key");

    /** The problem property that carries the lock key. */
    public static final String LOCK_KEY_PROPERTY = "lockKey";

    /**
     * The problem property that carries how long the request waited for a busy lock, in
     * milliseconds.
     */
    public static final String WAITED_MILLIS_PROPERTY = "waitedMillis";

    /**
     * The problem property that carries the length of a lock key refused as too long, in
     * characters.
     */
    public static final String KEY_LENGTH_PROPERTY = "keyLength";

    /** The problem property that carries the longest lock key accepted, in characters. */
    public static final String MAX_KEY_LENGTH_PROPERTY = "maxKeyLength";

    private static final Log logger = LogFactory.getLog(LockProblemDetailsExceptionHandler.class);

    /**
     * Keys are application data, possibly long; a response or log line needs only enough
     * to recognise one.
     */
    private static final int MAX_KEY_LENGTH = 200;

    private final Duration busyRetryAfter;

    private final Duration unavailableRetryAfter;

    /**
     * With {@code Retry-After: 1} on a busy lock and {@code Retry-After: 5} on an
     * unavailable lock store.
     */
    public LockProblemDetailsExceptionHandler() {
        this(Duration.ofSeconds(1), Duration.ofSeconds(5));
    }

    /**
     * @param busyRetryAfter the {@code Retry-After} of a 409; zero omits the header
     * @param unavailableRetryAfter the {@code Retry-After} of a 503; zero omits the
     * header
     */
    public LockProblemDetailsExceptionHandler(Duration busyRetryAfter, Duration unavailableRetryAfter) {
        this.busyRetryAfter = busyRetryAfter;
        this.unavailableRetryAfter = unavailableRetryAfter;
    }

    /**
     * Another owner held the lock for the whole wait time: {@code 409 Conflict}.
     * @param ex the failure
     * @return the problem response
     */
    @ExceptionHandler
    public ResponseEntity<ProblemDetail> handleLockTimeout(LockTimeoutException ex) {
        String key = displayKey(ex.getKey());
        if (logger.isDebugEnabled()) {
            logger.debug("Lock '" + key + "' busy; answered 409");
        }
        ProblemDetail problem = problem(HttpStatus.CONFLICT, LOCK_BUSY, "Resource busy",
                "Another request is working " + "on '" + key + "'. This request was not processed; retry later.", key);
        if (ex.getWaitTime() != null) {
            problem.setProperty(WAITED_MILLIS_PROPERTY, ex.getWaitTime().toMillis());
        }
        return respond(problem, busyRetryAfter);
    }

    /**
     * The lock store could not be asked (unreachable, too slow, or the acquisition was
     * interrupted): {@code 503 Service Unavailable}.
     * @param ex the failure, usually a {@link LockBackendException}
     * @return the problem response
     */
    @ExceptionHandler
    public ResponseEntity<ProblemDetail> handleLockUnavailable(LockAcquisitionException ex) {
        String key = displayKey(ex.getKey());
        logger.warn("Lock '" + key + "' unavailable; answered 503: " + oneLine(ex.getMessage()));
        ProblemDetail problem = problem(HttpStatus.SERVICE_UNAVAILABLE, LOCK_UNAVAILABLE, "Lock unavailable",
                "The lock '" + key + "' could not be acquired because the lock store is unavailable. This request was "
                        + "not processed; retry later.",
                key);
        return respond(problem, unavailableRetryAfter);
    }

    /**
     * The lease was lost while the request ran: {@code 500 Internal Server Error}.
     * @param ex the failure
     * @return the problem response
     */
    @ExceptionHandler
    public ResponseEntity<ProblemDetail> handleLockLost(LockLostException ex) {
        String key = displayKey(ex.getKey());
        logger.warn("Lock '" + key + "' lost while the request ran; answered 500: " + oneLine(ex.getMessage()));
        ProblemDetail problem = problem(HttpStatus.INTERNAL_SERVER_ERROR, LOCK_LOST, "Lock lost",
                "The lock '" + key + "' was lost while this request was processed, so another request may have done "
                        + "the same work at the same time. Check the outcome before retrying.",
                key);
        return respond(problem, Duration.ZERO);
    }

    /**
     * The lock key built from the request is blank or too long: {@code 400 Bad Request}.
     * The body shows at most the key's first {@value LockKeys#PREVIEW_LENGTH} characters,
     * never a long key in full.
     * @param ex the failure
     * @return the problem response
     */
    @ExceptionHandler
    public ResponseEntity<ProblemDetail> handleInvalidLockKey(InvalidLockKeyException ex) {
        String start = ex.getKeyStart();
        String key = displayKey(start) + (start != null && start.length() < ex.getKeyLength() ? "..." : "");
        if (logger.isDebugEnabled()) {
            logger.debug("Invalid lock key; answered 400: " + oneLine(ex.getMessage()));
        }
        ProblemDetail problem;
        if (ex.getReason() == InvalidLockKeyException.Reason.TOO_LONG) {
            problem = problem(HttpStatus.BAD_REQUEST, INVALID_LOCK_KEY, "Invalid lock key",
                    "The lock key built " + "from this request is longer than the " + ex.getMaxKeyLength()
                            + " characters accepted (" + LockKeys.MAX_LENGTH_PROPERTY
                            + "). This request was not processed; send a shorter value.",
                    key);
            if (ex.getKeyLength() > 0) {
                // Unknown (0) when the key was refused before it was built: SpEL's own
                // limit on a concatenation.
                problem.setProperty(KEY_LENGTH_PROPERTY, ex.getKeyLength());
            }
            problem.setProperty(MAX_KEY_LENGTH_PROPERTY, ex.getMaxKeyLength());
        }
        else {
            problem = problem(HttpStatus.BAD_REQUEST, INVALID_LOCK_KEY, "Invalid lock key", "The lock key built "
                    + "from this request is empty or blank. This request was not processed; send a non-blank value.",
                    key);
        }
        return respond(problem, Duration.ZERO);
    }

    /** Last, so that the application's own handlers for these exceptions come first. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    /**
     * The problem every handler starts from.
     * @param status the response status
     * @param type the problem type
     * @param title the problem type's short summary
     * @param detail this occurrence
     * @param key the lock key as shown
     * @return the problem
     */
    protected ProblemDetail problem(HttpStatus status, URI type, String title, String detail, String key) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setType(type);
        problem.setTitle(title);
        problem.setProperty(LOCK_KEY_PROPERTY, key);
        return problem;
    }

    private static ResponseEntity<ProblemDetail> respond(ProblemDetail problem, Duration retryAfter) {
        ResponseEntity.BodyBuilder response = ResponseEntity.status(problem.getStatus());
        if (!retryAfter.isZero() && !retryAfter.isNegative()) {
            // Retry-After takes whole seconds; round up so that a client never retries
            // early.
            long seconds = retryAfter.plusNanos(999_999_999).getSeconds();
            response.header(HttpHeaders.RETRY_AFTER, Long.toString(seconds));
        }
        return response.body(problem);
    }

    /**
     * The key as a response or a log line may show it: control characters (a forged line
     * break in a log, say) replaced, and at most {@value #MAX_KEY_LENGTH} characters.
     * @param key the lock key as the application named it
     * @return the key to show
     */
    protected static String displayKey(String key) {
        if (key == null) {
            return "";
        }
        String shown = key.length() > MAX_KEY_LENGTH ? key.substring(0, MAX_KEY_LENGTH) + "..." : key;
        StringBuilder safe = new StringBuilder(shown.length());
        shown.codePoints().forEach(c -> safe.appendCodePoint(Character.isISOControl(c) ? '?' : c));
        return safe.toString();
    }

    private static String oneLine(String message) {
        return message == null ? "" : message.replaceAll("\\p{Cntrl}+", " ");
    }

}
