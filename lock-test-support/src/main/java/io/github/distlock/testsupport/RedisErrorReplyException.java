package io.github.distlock.testsupport;

/**
 * An error reply ({@code -ERR ...}, {@code -MOVED ...}, {@code -NOSCRIPT ...}) sent by
 * Redis.
 *
 * <p>
 * It is unchecked so that tests can write {@code server.command("GET", "k")} without
 * ceremony, and a distinct type so that they can tell "Redis said no" apart from "Redis
 * did not answer" (an {@link java.io.IOException}). Inside an array reply (e.g. the
 * result of {@code EXEC}) an error element is returned as an instance of this class
 * instead of being thrown, so that the other elements are not lost.
 */
public class RedisErrorReplyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception for one error reply.
     * @param message the error line as Redis sent it, without the leading {@code -}
     */
    public RedisErrorReplyException(String message) {
        super(message);
    }

    /**
     * The first word of the error, which Redis uses as its error code ({@code ERR},
     * {@code WRONGTYPE}, {@code MOVED}, {@code NOSCRIPT}, ...), so tests need not parse
     * the message.
     * @return the error code, or the whole message when it has no space
     */
    public String errorCode() {
        String message = getMessage();
        int space = message.indexOf(' ');
        return space < 0 ? message : message.substring(0, space);
    }

}
