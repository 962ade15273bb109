package io.github.distlock.testsupport;

/**
 * A {@code redis-server} process could not be started or did not become ready in time.
 *
 * <p>
 * The message carries the command line and the last lines of the server's log, because a
 * failing fixture is otherwise very hard to diagnose from a CI report.
 */
public class RedisStartupException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     * @param message what failed, including the tail of the server log
     * @param cause the underlying failure, may be {@code null}
     */
    public RedisStartupException(String message, Throwable cause) {
        super(message, cause);
    }

}
