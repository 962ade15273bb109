package io.github.distlock;

import org.jspecify.annotations.Nullable;

/**
 * The one rule for what may name a lock, and how keys are shown in log lines and
 * messages.
 *
 * <p>
 * A key must not be {@code null} or blank, and must have at most
 * {@code distributed-lock.max-key-length} characters ({@value #DEFAULT_MAX_LENGTH} by
 * default), counted as the application gives the key, before the prefix.
 * {@link #requireValid} applies the rule wherever a key enters: the
 * {@link DistributedLock @DistributedLock} key of each call and each {@link LockService}
 * method, so both refuse the same keys with {@link InvalidLockKeyException}.
 *
 * <p>
 * Keys often come from user input (a {@code @DistributedLock} key expression over request
 * parameters), so a key must never be able to forge a log line: {@link #printable}
 * escapes control characters, newlines among them, and {@link #preview} also shortens a
 * long key.
 *
 * <pre>{@code
 * LockKeys.requireValid(key, 1024);                    // throws InvalidLockKeyException for " " or a 2000-char key
 * log.info("Took lock " + LockKeys.printable(key));   // "order:42\nFAKE" prints as 'order:42\nFAKE'
 * }</pre>
 */
public final class LockKeys {

    /** The default of {@code distributed-lock.max-key-length}. */
    public static final int DEFAULT_MAX_LENGTH = 1024;

    /** The property that sets the longest key accepted. */
    public static final String MAX_LENGTH_PROPERTY = "distributed-lock.max-key-length";

    /**
     * How many characters of a key {@link #preview} shows and
     * {@link InvalidLockKeyException} keeps.
     */
    public static final int PREVIEW_LENGTH = 50;

    private LockKeys() {
    }

    /**
     * Checks a lock key given to a {@link LockService} method.
     * @param key the key as the caller gave it
     * @param maxLength the longest key accepted, in characters
     * @return the key
     * @throws InvalidLockKeyException if the key is {@code null}, blank or longer than
     * {@code maxLength}
     */
    public static String requireValid(@Nullable String key, int maxLength) {
        return requireValid(key, maxLength, "The lock key");
    }

    /**
     * Checks a lock key, with a message that says where it came from.
     * @param key the key as the caller gave it
     * @param maxLength the longest key accepted, in characters
     * @param subject what the key is, starting the message: {@code "The lock key"}, or
     * for example {@code "The key of segment 3 of this SegmentedLock"}
     * @return the key
     * @throws InvalidLockKeyException if the key is {@code null}, blank or longer than
     * {@code maxLength}
     */
    public static String requireValid(@Nullable String key, int maxLength, String subject) {
        if (key == null || key.isBlank()) {
            throw new InvalidLockKeyException(InvalidLockKeyException.Reason.BLANK, key, maxLength,
                    subject + " must not be null or blank, was " + preview(key)
                            + ". Nothing was locked. Pass a key that "
                            + "names the resource, such as \"order:\" + orderId.");
        }
        if (key.length() > maxLength) {
            throw tooLong(key, maxLength, subject + " is", "Nothing was locked.");
        }
        return key;
    }

    /**
     * The exception for a key longer than {@code maxLength}.
     * @param key the key
     * @param maxLength the longest key accepted
     * @param subject the start of the message up to the key's length, for example
     * {@code "The lock key is"}
     * @param outcome what did not happen because of it, for example
     * {@code "Nothing was locked."}
     * @return the exception, with the length, the limit, the start of the key and the fix
     */
    public static InvalidLockKeyException tooLong(String key, int maxLength, String subject, String outcome) {
        return new InvalidLockKeyException(InvalidLockKeyException.Reason.TOO_LONG, key, maxLength,
                subject + " " + key.length() + " characters long, longer than " + MAX_LENGTH_PROPERTY + " (" + maxLength
                        + "): " + preview(key) + ". " + outcome
                        + " Lock on a short identifier of the resource (an id, or a hash "
                        + "of a long value), or raise " + MAX_LENGTH_PROPERTY + ".");
    }

    /**
     * The key as {@link #printable}, shortened to its first {@value #PREVIEW_LENGTH}
     * characters if it is longer: a log line or a message never carries a whole
     * megabyte-long key.
     * @param key the key; {@code null} prints as {@code null}
     * @return for example {@code 'order:42'}, or
     * {@code 'xxxx...xxxx'... (its first 50 characters)}
     */
    public static String preview(@Nullable String key) {
        String start = start(key);
        return (start == null || start.length() == key.length() ? printable(start)
                : printable(start) + "... (its first " + start.length() + " characters)");
    }

    /**
     * The key's first {@value #PREVIEW_LENGTH} characters, without splitting a surrogate
     * pair.
     */
    static @Nullable String start(@Nullable String key) {
        if (key == null || key.length() <= PREVIEW_LENGTH) {
            return key;
        }
        int end = (Character.isHighSurrogate(key.charAt(PREVIEW_LENGTH - 1)) ? PREVIEW_LENGTH - 1 : PREVIEW_LENGTH);
        return key.substring(0, end);
    }

    /**
     * The key in single quotes, with control characters written as escapes: {@code \n},
     * {@code \r}, {@code \t}, a backslash as {@code \\}, and any other control character
     * (and the Unicode line and paragraph separators) as {@code \}{@code uXXXX}.
     * @param key the key as the application named it; {@code null} prints as {@code null}
     * @return the key, safe to put into a single log line
     */
    public static String printable(@Nullable String key) {
        if (key == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(key.length() + 2).append('\'');
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            switch (c) {
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    }
                    else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('\'').toString();
    }

}
