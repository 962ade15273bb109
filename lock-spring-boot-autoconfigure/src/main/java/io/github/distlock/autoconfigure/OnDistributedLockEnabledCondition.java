package io.github.distlock.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches unless {@code distributed-lock.enabled} is false, and fails the startup on
 * configuration the starter would otherwise ignore: an {@code enabled} that is not a
 * boolean ({@code @ConditionalOnProperty} would read {@code nope} as "not true" and back
 * off without a word), or a property under {@code distributed-lock.*} that no field binds
 * ({@link DistributedLockPropertyNames}). Checked here because this is the first place
 * the starter reads its configuration, for every property source: files, YAML, system
 * properties, environment variables.
 */
class OnDistributedLockEnabledCondition extends SpringBootCondition {

    static final String ENABLED = DistributedLockProperties.PREFIX + ".enabled";

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        Environment environment = context.getEnvironment();
        DistributedLockPropertyNames.requireKnown(environment);
        ConditionMessage.Builder message = ConditionMessage.forCondition("DistributedLockEnabled");
        return (isEnabled(environment) ? ConditionOutcome.match(message.because(ENABLED + " is true or absent"))
                : ConditionOutcome.noMatch(message.because(ENABLED + " is false")));
    }

    /**
     * The value as the properties class binds it ({@code true}/{@code false}, also
     * {@code on}/{@code off}, {@code yes}/{@code no}), absent meaning true.
     * @throws InvalidConfigurationPropertyValueException for anything else, blank
     * included
     */
    static boolean isEnabled(Environment environment) {
        Binder binder = Binder.get(environment);
        String raw = binder.bind(ENABLED, String.class).orElse(null);
        if (raw == null) {
            return true;
        }
        Boolean enabled = null;
        try {
            enabled = (raw.isBlank() ? null : binder.bind(ENABLED, Boolean.class).orElse(null));
        }
        catch (BindException ex) {
            // reported below, with the fix
        }
        if (enabled == null) {
            throw new InvalidConfigurationPropertyValueException(ENABLED, raw,
                    "It must be true or false, so the " + "starter cannot tell whether to start. Use " + ENABLED
                            + "=false to turn it off, or remove the " + "property (the default is true).");
        }
        return enabled;
    }

    /**
     * The opposite: matches only when {@code distributed-lock.enabled} is false, with the
     * same checks.
     */
    static class Disabled extends SpringBootCondition {

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            Environment environment = context.getEnvironment();
            ConditionMessage.Builder message = ConditionMessage.forCondition("DistributedLockDisabled");
            return (isEnabled(environment) ? ConditionOutcome.noMatch(message.because(ENABLED + " is true or absent"))
                    : ConditionOutcome.match(message.because(ENABLED + " is false")));
        }

    }

}
