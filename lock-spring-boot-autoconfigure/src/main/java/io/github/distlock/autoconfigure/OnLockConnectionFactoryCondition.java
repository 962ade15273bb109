package io.github.distlock.autoconfigure;

import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ObjectUtils;

/**
 * Matches when {@link LockConnectionFactorySelection} can choose the locks' connection
 * factory: one is named by {@value LockConnectionFactorySelection#PROPERTY}, or there is
 * exactly one, or exactly one {@code @Primary}. Like
 * {@code @ConditionalOnSingleCandidate}, which it replaces so that the property can pick
 * among several.
 */
class OnLockConnectionFactoryCondition extends SpringBootCondition implements ConfigurationCondition {

    @Override
    public ConfigurationPhase getConfigurationPhase() {
        return ConfigurationPhase.REGISTER_BEAN;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        ConditionMessage.Builder message = ConditionMessage.forCondition("LockConnectionFactory");
        ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
        LockConnectionFactorySelection.Choice choice = LockConnectionFactorySelection.choose(beanFactory,
                context.getEnvironment());
        if (!choice.chosen()) {
            return ConditionOutcome.noMatch(message.because(choice.problem()));
        }
        if (!accepts(beanFactory, choice.beanName())) {
            return ConditionOutcome.noMatch(message.because(
                    "RedisConnectionFactory bean '" + choice.beanName() + "' is not of the type this backend needs"));
        }
        return ConditionOutcome.match(message.because("locks use RedisConnectionFactory bean '" + choice.beanName()
                + "'" + (choice.named() ? " (" + LockConnectionFactorySelection.PROPERTY + ")" : "")));
    }

    /**
     * Whether this backend works on the chosen bean: any factory does, through Spring
     * Data's template.
     */
    boolean accepts(ConfigurableListableBeanFactory beanFactory, String beanName) {
        return true;
    }

    /**
     * The native Lettuce backend: only for a bean declared as a
     * {@code LettuceConnectionFactory}.
     */
    static class Lettuce extends OnLockConnectionFactoryCondition {

        private static final String LETTUCE_FACTORY = "org.springframework.data.redis.connection.lettuce."
                + "LettuceConnectionFactory";

        @Override
        boolean accepts(ConfigurableListableBeanFactory beanFactory, String beanName) {
            // By declared type, as @ConditionalOnBean matches, so a factory declared as a
            // plain
            // RedisConnectionFactory goes through Spring Data's template (which works on
            // Lettuce too).
            Class<?> lettuce = resolve(LETTUCE_FACTORY, beanFactory.getBeanClassLoader());
            return lettuce != null && ObjectUtils.containsElement(
                    BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beanFactory, lettuce, true, false), beanName);
        }

        private static Class<?> resolve(String name, ClassLoader classLoader) {
            try {
                return Class.forName(name, false, classLoader);
            }
            catch (ClassNotFoundException | LinkageError ex) {
                return null;
            }
        }

    }

}
