package io.github.distlock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a {@link NoLockServiceException}: which methods, why there is no lock service,
 * and the fix.
 */
class NoLockServiceFailureAnalyzer extends AbstractFailureAnalyzer<NoLockServiceException> {

    /** How many methods the description lists before it only counts the rest. */
    private static final int LISTED_METHODS = 10;

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, NoLockServiceException cause) {
        StringBuilder description = new StringBuilder("@DistributedLock methods would run without a lock, because ")
            .append("there is no LockService bean: ")
            .append(cause.getReason())
            .append(".\n\n")
            .append("The methods:\n");
        cause.getLockedMethods()
            .stream()
            .limit(LISTED_METHODS)
            .forEach(method -> description.append("    - ").append(method).append('\n'));
        int more = cause.getLockedMethods().size() - LISTED_METHODS;
        if (more > 0) {
            description.append("    and ").append(more).append(" more\n");
        }
        String action = cause.getAction()
                + "\n\nTo run these methods without any lock on purpose (in a test, say), set "
                + OnDistributedLockEnabledCondition.ENABLED + "=false; the startup then logs a WARN naming them.";
        return new FailureAnalysis(description.toString(), action, cause);
    }

}
