package io.github.distlock.autoconfigure;

import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Period;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.util.unit.DataSize;

/**
 * The property names under {@code distributed-lock.*}, read off
 * {@link DistributedLockProperties} so that a new field is known at once, and the check
 * that fails the startup on any other name: Spring Boot ignores a property nothing binds,
 * so a typo such as {@code distributed-lock.default-tll} would silently leave the default
 * in place.
 *
 * <p>
 * Names are compared the way Boot's relaxed binding matches them: {@code default-ttl},
 * {@code defaultTtl} and {@code default_ttl} are one name in properties and YAML files,
 * system properties and command-line arguments; environment variables must have one of
 * the forms Boot binds ({@code DISTRIBUTED_LOCK_DEFAULT_TTL} or
 * {@code DISTRIBUTEDLOCK_DEFAULTTTL}).
 */
final class DistributedLockPropertyNames {

    private static final ConfigurationPropertyName PREFIX = ConfigurationPropertyName
        .of(DistributedLockProperties.PREFIX);

    /**
     * Every leaf property, relative to the prefix, in dashed form: {@code default-ttl},
     * {@code watchdog.enabled}.
     */
    private static final Set<String> LEAVES = new TreeSet<>();

    /** Map, list and array properties, which accept any name below them. */
    private static final Set<String> CONTAINERS = new TreeSet<>();

    /**
     * Where a module that binds properties of its own under the prefix (a store's
     * settings, such as {@code zookeeper.connect-string}) names them, relative to the
     * prefix, one a line; a name ending in {@code .*} accepts anything below it.
     */
    static final String GROUPS_RESOURCE = "META-INF/distributed-lock/property-groups";

    static {
        collect(DistributedLockProperties.class, "");
        collectGroups();
    }

    private DistributedLockPropertyNames() {
    }

    private static void collectGroups() {
        try {
            Enumeration<URL> files = DistributedLockPropertyNames.class.getClassLoader().getResources(GROUPS_RESOURCE);
            while (files.hasMoreElements()) {
                try (InputStream in = files.nextElement().openStream()) {
                    for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\\R")) {
                        String name = line.strip();
                        if (name.endsWith(".*")) {
                            CONTAINERS.add(name.substring(0, name.length() - 2));
                        }
                        else if (!name.isEmpty() && !name.startsWith("#")) {
                            LEAVES.add(name);
                        }
                    }
                }
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not read " + GROUPS_RESOURCE, ex);
        }
    }

    /** The valid names, with the prefix, for messages and tests. */
    static List<String> all() {
        List<String> names = new ArrayList<>();
        LEAVES.forEach(leaf -> names.add(DistributedLockProperties.PREFIX + "." + leaf));
        CONTAINERS.forEach(container -> names.add(DistributedLockProperties.PREFIX + "." + container + ".*"));
        return names;
    }

    /**
     * Fails on the first property under the prefix that no field binds, naming it, its
     * source and the nearest valid names.
     * @param environment the application's environment, with every property source
     * @throws InvalidConfigurationPropertyValueException naming the unknown property
     */
    static void requireKnown(Environment environment) {
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            Object underlying = source.getUnderlyingSource();
            if (underlying instanceof SystemEnvironmentPropertySource variables && isSystemEnvironment(variables)) {
                checkEnvironmentVariables(variables);
            }
            else if (source instanceof IterableConfigurationPropertySource iterable) {
                iterable.stream().filter(PREFIX::isAncestorOf).forEach(name -> check(iterable, name));
            }
        }
    }

    /**
     * Boot reads environment variable names with its relaxed mapping only in the sources
     * it names this way.
     */
    private static boolean isSystemEnvironment(PropertySource<?> source) {
        String name = source.getName();
        return name.equals(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME)
                || name.endsWith("-" + StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
    }

    private static void check(ConfigurationPropertySource source, ConfigurationPropertyName name) {
        List<String> elements = new ArrayList<>();
        for (int i = PREFIX.getNumberOfElements(); i < name.getNumberOfElements(); i++) {
            elements.add(name.getElement(i, Form.UNIFORM));
        }
        if (elements.isEmpty() || isKnown(elements)) {
            return;
        }
        ConfigurationProperty property = source.getConfigurationProperty(name);
        String origin = (property != null && property.getOrigin() != null ? property.getOrigin().toString()
                : String.valueOf(source.getUnderlyingSource()));
        String relative = name.subName(PREFIX.getNumberOfElements()).toString();
        throw unknown(name.toString(), (property != null ? property.getValue() : null), origin, relative, false);
    }

    /**
     * Whether the uniform elements ({@code defaultttl}) name a leaf, or something under a
     * container.
     */
    private static boolean isKnown(List<String> elements) {
        String joined = String.join(".", elements);
        for (String leaf : LEAVES) {
            if (uniform(leaf).equals(joined)) {
                return true;
            }
        }
        for (String container : CONTAINERS) {
            String uniform = uniform(container);
            if (joined.equals(uniform) || joined.startsWith(uniform + ".")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Environment variable names are matched against the two forms Boot binds, in either
     * case: for example {@code DISTRIBUTED_LOCK_WATCHDOG_RENEWAL_RATIO} and
     * {@code DISTRIBUTEDLOCK_WATCHDOG_RENEWALRATIO}.
     */
    private static void checkEnvironmentVariables(EnumerablePropertySource<?> variables) {
        for (String variable : variables.getPropertyNames()) {
            String upper = variable.toUpperCase(Locale.ROOT);
            if (!upper.startsWith("DISTRIBUTED_LOCK_") && !upper.startsWith("DISTRIBUTEDLOCK_")) {
                continue;
            }
            if (!isKnownVariable(upper)) {
                String relative = upper.substring(upper.indexOf("LOCK_") + "LOCK_".length())
                    .toLowerCase(Locale.ROOT)
                    .replace('_', '-');
                throw unknown(variable, variables.getProperty(variable), "the environment variables", relative, true);
            }
        }
    }

    private static boolean isKnownVariable(String upper) {
        for (String leaf : LEAVES) {
            for (String form : variableForms(leaf)) {
                if (upper.equals(form)) {
                    return true;
                }
            }
        }
        for (String container : CONTAINERS) {
            for (String form : variableForms(container)) {
                if (upper.startsWith(form + "_")) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The variable names Boot binds to a property, the usual one first:
     * {@code watchdog.renewal-ratio} is {@code DISTRIBUTED_LOCK_WATCHDOG_RENEWAL_RATIO}
     * or {@code DISTRIBUTEDLOCK_WATCHDOG_RENEWALRATIO}.
     */
    private static List<String> variableForms(String relative) {
        String full = (DistributedLockProperties.PREFIX + "." + relative).toUpperCase(Locale.ROOT).replace('.', '_');
        return List.of(full.replace('-', '_'), full.replace("-", ""));
    }

    private static InvalidConfigurationPropertyValueException unknown(String name, Object value, String origin,
            String relative, boolean variable) {
        List<String> close = closest(relative).stream()
            .map(candidate -> variable
                    ? variableForms(candidate).get(0) + " (" + DistributedLockProperties.PREFIX + "." + candidate + ")"
                    : DistributedLockProperties.PREFIX + "." + candidate)
            .toList();
        String suggestion = (close.isEmpty() ? "" : " Did you mean " + String.join(" or ", close) + "?");
        return new InvalidConfigurationPropertyValueException(name, value,
                "There is no property " + name + " (from " + origin + "), so its value would be ignored." + suggestion
                        + " The properties under " + DistributedLockProperties.PREFIX + " are: "
                        + String.join(", ", all()) + ". Correct the name, or remove the property.");
    }

    /**
     * The valid names (relative) within a few typos of {@code relative}, nearest first.
     */
    private static List<String> closest(String relative) {
        String wanted = uniform(relative).replace(".", "");
        List<String> candidates = new ArrayList<>(LEAVES);
        candidates.addAll(CONTAINERS);
        int limit = Math.max(2, wanted.length() / 3);
        return candidates.stream()
            .filter(candidate -> distance(flat(candidate), wanted) <= limit)
            .sorted(Comparator.comparingInt(candidate -> distance(flat(candidate), wanted)))
            .limit(3)
            .toList();
    }

    /**
     * Without separators, so that an environment variable's underscores compare with dots
     * and dashes alike.
     */
    private static String flat(String dashed) {
        return uniform(dashed).replace(".", "");
    }

    /**
     * {@code watchdog.renewal-ratio} as Boot compares it: {@code watchdog.renewalratio}.
     */
    private static String uniform(String dashed) {
        return dashed.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9.]", "");
    }

    /** Levenshtein distance. */
    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    /**
     * Walks the bean properties as Boot's JavaBean binder does: a settable simple value
     * is a leaf, a map, collection or array a container, and a getter without a setter
     * returning an object of another type a nested group.
     */
    private static void collect(Class<?> type, String prefix) {
        for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
            if (descriptor.getReadMethod() == null || descriptor.getName().equals("class")) {
                continue;
            }
            Class<?> propertyType = descriptor.getPropertyType();
            String name = prefix + DataObjectPropertyName.toDashedForm(descriptor.getName());
            if (Map.class.isAssignableFrom(propertyType) || Collection.class.isAssignableFrom(propertyType)
                    || propertyType.isArray()) {
                CONTAINERS.add(name);
            }
            else if (isValue(propertyType)) {
                if (descriptor.getWriteMethod() != null) {
                    LEAVES.add(name);
                }
            }
            else if (propertyType.getName().startsWith("io.github.distlock.")) {
                collect(propertyType, name + ".");
            }
            else if (descriptor.getWriteMethod() != null) {
                LEAVES.add(name); // a value Boot converts, such as a Charset or a
                                  // Resource
            }
        }
    }

    private static boolean isValue(Class<?> type) {
        return BeanUtils.isSimpleValueType(type) || type == Duration.class || type == Period.class
                || type == DataSize.class;
    }

}
