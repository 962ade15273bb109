package io.github.distlock.aop;

import io.github.distlock.LockAcquisitionException;

/**
 * Internal signal that a call's lock could not be had, carrying which key failed. Never
 * reaches the caller: the failure strategy turns it into the original
 * {@link LockAcquisitionException}, a fallback value or an empty result. Without a stack
 * trace, since only its cause is ever shown.
 */
final class LockUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String key;

    LockUnavailableException(String key, LockAcquisitionException cause) {
        super(cause.getMessage(), cause, false, false);
        this.key = key;
    }

    String getKey() {
        return key;
    }

    @Override
    public synchronized LockAcquisitionException getCause() {
        return (LockAcquisitionException) super.getCause();
    }

}
