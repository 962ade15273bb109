package io.github.distlock;

import java.util.OptionalLong;

import org.jspecify.annotations.NullMarked;
import org.springframework.context.ApplicationEvent;

/**
 * Published when the lease watchdog finds a held lock lost: its key was deleted or taken
 * over, or Redis stayed unreachable until the lease ran out. From then on another
 * instance may run the guarded work at the same time.
 *
 * <pre>{@code
 * &#64;EventListener
 * void onLockLost(LockLostEvent event) {
 *     alerts.raise("lost lock " + event.getKey() + ": " + event.getReason());
 * }
 * }</pre>
 *
 * <p>
 * Non-null throughout. Marked on the class rather than in a {@code package-info}: this
 * package's {@code package-info} belongs to {@code lock-core}, and a second one here
 * would be a duplicate class on the classpath.
 */
@NullMarked
public class LockLostEvent extends ApplicationEvent {

    private final String reason;

    /**
     * @param handle the lock that was lost
     * @param reason why, in words
     */
    public LockLostEvent(LockHandle handle, String reason) {
        super(handle);
        this.reason = reason;
    }

    /** The lock that was lost. */
    public LockHandle getHandle() {
        return (LockHandle) getSource();
    }

    /** The lock's key as the application named it. */
    public String getKey() {
        return getHandle().key();
    }

    /**
     * The fencing token of the lost acquisition, if one was issued before the loss; a
     * newer holder has a larger one. Empty if the holder never asked for one: then it
     * wrote nothing fenced.
     */
    public OptionalLong getFencingToken() {
        return getHandle().issuedFencingToken();
    }

    /** Why the lease was lost. */
    public String getReason() {
        return reason;
    }

}
