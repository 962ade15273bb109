package io.github.distlock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.github.distlock.aop.InvalidLockDefinitionException;

/**
 * Shows an invalid {@code @DistributedLock} the way Spring Boot shows a bad property, in
 * its "APPLICATION FAILED TO START" report instead of a bean-creation stack trace: the
 * method, the attribute, the value as written, what is wrong with it and the fix.
 */
class InvalidLockDefinitionFailureAnalyzer extends AbstractFailureAnalyzer<InvalidLockDefinitionException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidLockDefinitionException cause) {
        String method = cause.getMethod().getDeclaringClass().getSimpleName() + "." + cause.getMethod().getName();
        StringBuilder description = new StringBuilder(cause.getMessage());
        if (cause.getCause() != null && cause.getCause().getMessage() != null) {
            description.append("\n\nCaused by: ").append(cause.getCause().getMessage());
        }
        String action = (cause.getAttribute() != null)
                ? "Correct the " + cause.getAttribute() + " attribute of @DistributedLock on " + method + ": "
                        + cause.getProblem()
                : "Change " + method + " so that its lock can take effect: " + cause.getProblem();
        return new FailureAnalysis(description.toString(), action, cause);
    }

}
