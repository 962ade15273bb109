package io.github.distlock;

import org.jspecify.annotations.Nullable;

/**
 * A lock key that cannot name a lock: {@code null}, blank, or longer than
 * {@code distributed-lock.max-key-length}. Nothing was sent to the lock store and the
 * guarded work did not run. Thrown by every way in: a
 * {@link DistributedLock @DistributedLock} key evaluated for a call, and each
 * {@link LockService} method. The rule itself is
 * {@link LockKeys#requireValid(String, int)}.
 *
 * <p>
 * Such a key usually comes from outside (a request parameter, a message field), so in
 * Spring MVC and WebFlux applications it becomes a {@code 400 Bad Request} problem
 * detail; elsewhere it is the {@link IllegalArgumentException} it extends.
 *
 * <pre>{@code
 * try {
 *     coupons.redeem(code);              // @DistributedLock(key = "'coupon:' + #code")
 * } catch (InvalidLockKeyException ex) {
 *     reject(ex.getReason());           // BLANK or TOO_LONG
 * }
 * }</pre>
 *
 * <p>
 * It never holds the whole key: a key refused for its length may be megabytes long. It
 * keeps the first {@value LockKeys#PREVIEW_LENGTH} characters and the length.
 */
public class InvalidLockKeyException extends IllegalArgumentException {

    /** What is wrong with the key. */
    public enum Reason {

        /** {@code null}, empty, or only whitespace. */
        BLANK,

        /** More characters than the maximum key length. */
        TOO_LONG

    }

    private final Reason reason;

    private final @Nullable String keyStart;

    private final int keyLength;

    private final int maxKeyLength;

    /**
     * @param reason what is wrong with the key
     * @param key the key as the caller gave it, or {@code null}; only its first
     * {@value LockKeys#PREVIEW_LENGTH} characters are kept
     * @param maxKeyLength the longest key accepted where the key was refused
     * @param message what is wrong, where the key came from, and the fix
     */
    public InvalidLockKeyException(Reason reason, @Nullable String key, int maxKeyLength, String message) {
        super(message);
        this.reason = reason;
        this.keyStart = LockKeys.start(key);
        this.keyLength = (key != null ? key.length() : 0);
        this.maxKeyLength = maxKeyLength;
    }

    /** What is wrong with the key. */
    public Reason getReason() {
        return reason;
    }

    /**
     * The key's first {@value LockKeys#PREVIEW_LENGTH} characters as the caller gave them
     * (the whole key if it is no longer), or {@code null} for a {@code null} key. It may
     * hold control characters: escape it before logging it ({@link LockKeys#printable}).
     */
    public @Nullable String getKeyStart() {
        return keyStart;
    }

    /**
     * The key's length in characters; 0 for a {@code null} key, or for one refused before
     * it was built (a {@code @DistributedLock} key expression whose concatenation grew
     * past SpEL's own limit).
     */
    public int getKeyLength() {
        return keyLength;
    }

    /**
     * The longest key accepted where this one was refused
     * ({@code distributed-lock.max-key-length}).
     */
    public int getMaxKeyLength() {
        return maxKeyLength;
    }

}
