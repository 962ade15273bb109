package io.github.distlock.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Which {@link RedisConnectionFactory} bean the locks use: the one {@value #PROPERTY}
 * names, else the only one, else the only {@code @Primary} one. Decided from bean
 * definitions, without creating a bean, so that the backends' conditions, their bean
 * methods and the failure analysis of a missing lock service all give the same answer.
 */
final class LockConnectionFactorySelection {

    /** The property that names the factory. */
    static final String PROPERTY = DistributedLockProperties.PREFIX + ".redis.connection-factory";

    private LockConnectionFactorySelection() {
    }

    /**
     * The outcome of a selection.
     *
     * @param beanName the chosen bean, or {@code null} if none could be chosen
     * @param candidates every {@link RedisConnectionFactory} bean that may be injected
     * @param named whether {@link #PROPERTY} chose it (the bean may then not exist:
     * {@link #resolve} says so)
     */
    record Choice(String beanName, List<String> candidates, boolean named) {

        boolean chosen() {
            return beanName != null;
        }

        /** Why nothing was chosen, in the words of a startup failure. */
        String problem() {
            if (candidates.isEmpty()) {
                return "there is no RedisConnectionFactory bean";
            }
            return "there are " + candidates.size() + " RedisConnectionFactory beans, " + quoted(candidates)
                    + ", and none is @Primary";
        }
    }

    /**
     * Chooses the factory.
     * @param beanFactory the context's bean factory (its ancestors are searched too)
     * @param environment where {@value #PROPERTY} is read from
     * @return the choice; never {@code null}
     */
    static Choice choose(ConfigurableListableBeanFactory beanFactory, Environment environment) {
        List<String> candidates = new ArrayList<>();
        for (String name : BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beanFactory,
                RedisConnectionFactory.class, true, false)) {
            if (isCandidate(beanFactory, name)) {
                candidates.add(name);
            }
        }
        String configured = configuredName(environment);
        if (configured != null) {
            return new Choice(configured, candidates, true);
        }
        if (candidates.size() == 1) {
            return new Choice(candidates.get(0), candidates, false);
        }
        List<String> primary = candidates.stream().filter(name -> isPrimary(beanFactory, name)).toList();
        return new Choice(primary.size() == 1 ? primary.get(0) : null, candidates, false);
    }

    /**
     * The chosen factory.
     * @throws InvalidConfigurationPropertyValueException if {@value #PROPERTY} names no
     * connection factory
     * @throws IllegalStateException if none could be chosen (the backends' conditions
     * prevent that)
     */
    static RedisConnectionFactory resolve(ConfigurableListableBeanFactory beanFactory, Environment environment) {
        Choice choice = choose(beanFactory, environment);
        if (!choice.chosen()) {
            throw new IllegalStateException("No RedisConnectionFactory for locks: " + choice.problem());
        }
        if (choice.named() && !beanFactory.containsBean(choice.beanName())) {
            throw new InvalidConfigurationPropertyValueException(PROPERTY, choice.beanName(),
                    "No bean has that name. " + available(choice)
                            + " Name one of them, or remove the property to use the only (or @Primary) one.");
        }
        if (choice.named() && !beanFactory.isTypeMatch(choice.beanName(), RedisConnectionFactory.class)) {
            throw new InvalidConfigurationPropertyValueException(PROPERTY, choice.beanName(),
                    "That bean is a " + beanFactory.getType(choice.beanName()).getName()
                            + ", not a RedisConnectionFactory. " + available(choice));
        }
        return beanFactory.getBean(choice.beanName(), RedisConnectionFactory.class);
    }

    /** The property's value, {@code null} when absent or blank. */
    static String configuredName(Environment environment) {
        String name = Binder.get(environment).bind(PROPERTY, String.class).map(String::trim).orElse("");
        return name.isEmpty() ? null : name;
    }

    private static String available(Choice choice) {
        return choice.candidates().isEmpty() ? "The application has no RedisConnectionFactory bean."
                : "The RedisConnectionFactory beans are " + quoted(choice.candidates()) + ".";
    }

    /**
     * Beans declared with {@code autowireCandidate = false} or
     * {@code defaultCandidate = false} are not ours.
     */
    private static boolean isCandidate(ConfigurableListableBeanFactory beanFactory, String name) {
        BeanDefinition definition = definition(beanFactory, name);
        if (definition == null) {
            return true; // a singleton registered without a definition
        }
        return definition.isAutowireCandidate()
                && !(definition instanceof AbstractBeanDefinition bean && !bean.isDefaultCandidate());
    }

    private static boolean isPrimary(ConfigurableListableBeanFactory beanFactory, String name) {
        BeanDefinition definition = definition(beanFactory, name);
        return definition != null && definition.isPrimary();
    }

    private static BeanDefinition definition(ConfigurableListableBeanFactory beanFactory, String name) {
        try {
            return beanFactory.getMergedBeanDefinition(name);
        }
        catch (NoSuchBeanDefinitionException ex) {
            return null;
        }
    }

    static String quoted(List<String> names) {
        return names.stream().map(name -> "'" + name + "'").collect(Collectors.joining(", "));
    }

}
