package io.github.distlock.autoconfigure;

import java.util.List;

/**
 * The application has {@code @DistributedLock} methods but no
 * {@link io.github.distlock.LockService} to lock them with, so every call would run
 * unguarded. Fails the startup; {@link NoLockServiceFailureAnalyzer} explains it.
 */
class NoLockServiceException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final transient List<String> lockedMethods;

    private final String reason;

    private final String action;

    /**
     * @param lockedMethods the methods that would run without a lock
     * @param reason why there is no lock service
     * @param action how to get one
     */
    NoLockServiceException(List<String> lockedMethods, String reason, String action) {
        super(lockedMethods.size() + " @DistributedLock method(s) would run without a lock, because there is no "
                + "LockService: " + reason + ". " + action + " Methods: " + lockedMethods);
        this.lockedMethods = List.copyOf(lockedMethods);
        this.reason = reason;
        this.action = action;
    }

    List<String> getLockedMethods() {
        return lockedMethods;
    }

    String getReason() {
        return reason;
    }

    String getAction() {
        return action;
    }

}
