package io.github.distlock.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.github.distlock.autoconfigure.DistributedLockProperties;

/**
 * Writes {@code docs/configuration.md} from the configuration metadata that Spring Boot's
 * configuration processor generates from the {@code @ConfigurationProperties} classes and
 * their field Javadoc, so that the reference cannot say something the IDE help does not:
 * this module's, and those of the store modules (lock-etcd, lock-zookeeper), each in a
 * section of its own. Run through {@link ConfigurationReferenceTest}, which fails when
 * the file in the repository is stale.
 *
 * <pre>{@code
 * String markdown = ConfigurationReference.fromCompiledMetadata().markdown();
 * }</pre>
 */
public final class ConfigurationReference {

    /** The command that rewrites the file; the stale-file failure quotes it. */
    public static final String REGENERATE_COMMAND = "./mvnw -B -o -q -pl lock-spring-boot-autoconfigure -am verify "
            + "-Dtest=ConfigurationReferenceTest -Dsurefire.failIfNoSpecifiedTests=false -Ddocs.write=true";

    static final String GENERATED = "META-INF/spring-configuration-metadata.json";

    static final String ADDITIONAL = "META-INF/additional-spring-configuration-metadata.json";

    /**
     * What the overview names as the module of this module's groups: the one an
     * application adds.
     */
    private static final String STARTER = "lock-spring-boot-starter";

    /**
     * Headings and one-line introductions of the known groups, in the order the page
     * shows them. A group that is not listed (a new nested properties class) still
     * appears, after these, under its own name.
     */
    private static final Map<String, String[]> SECTIONS = new LinkedHashMap<>();

    static {
        SECTIONS.put(DistributedLockProperties.PREFIX, new String[] { "Core",
                "Keys, default lease and wait, command timeouts, replica acknowledgements and the annotation's place "
                        + "among other advice." });
        SECTIONS.put(DistributedLockProperties.PREFIX + ".watchdog",
                new String[] { "Watchdog", "Renewal of held leases, so a short ttl does not expire under slow work "
                        + "([leases and the watchdog](guide.md#leases-and-the-watchdog))." });
        SECTIONS.put(DistributedLockProperties.PREFIX + ".redlock", new String[] { "Redlock",
                "Locks over several independent Redis masters instead of the one Redis of `spring.data.redis.*` "
                        + "([Redlock](redlock.md))." });
        SECTIONS.put(DistributedLockProperties.PREFIX + ".etcd", new String[] { "etcd",
                "Locks in an etcd cluster, with the `lock-etcd` module on the class path: setting `endpoints` "
                        + "declares the backend named `etcd` ([etcd](etcd.md), [which backend](backends.md))." });
        SECTIONS.put(DistributedLockProperties.PREFIX + ".zookeeper",
                new String[] { "ZooKeeper",
                        "Locks in a ZooKeeper ensemble, with the `lock-zookeeper` module on the class path: setting "
                                + "`connect-string` declares the backend named `zookeeper` ([ZooKeeper](zookeeper.md), "
                                + "[which backend](backends.md))." });
        SECTIONS.put(DistributedLockProperties.PREFIX + ".web.problem-details",
                new String[] { "Web problem details",
                        "How lock failures in Spring MVC and WebFlux requests are answered "
                                + "([web applications](guide.md#web-applications))." });
    }

    private final Map<String, Property> properties;

    private final List<String> groups;

    /**
     * The module that binds each group, for the groups of modules other than this one.
     */
    private final Map<String, String> groupModules;

    private ConfigurationReference(Map<String, Property> properties, List<String> groups,
            Map<String, String> groupModules) {
        this.properties = properties;
        this.groups = groups;
        this.groupModules = groupModules;
    }

    /**
     * One {@code distributed-lock.*} property as the metadata describes it;
     * {@code source} is the properties class that binds it.
     */
    record Property(String name, String type, String defaultValue, String description, Map<String, String> values,
            String source) {
    }

    /**
     * Reads the metadata the configuration processor wrote next to the compiled
     * {@link DistributedLockProperties}, with
     * {@code additional-spring-configuration-metadata.json} merged in the way the
     * processor does: it adds properties and hints, and fills in what the generated entry
     * leaves out (such as a computed default). The other modules' properties come from
     * {@link ModuleConfigurationMetadata}, which runs the same processor on their
     * sources.
     * @throws IllegalStateException if the metadata was not generated (the module was not
     * compiled), or the processor fails on another module
     */
    public static ConfigurationReference fromCompiledMetadata() {
        Path classes = classesDirectory();
        Path generated = classes.resolve(GENERATED);
        if (!Files.isRegularFile(generated)) {
            throw new IllegalStateException("No configuration metadata at " + generated + ": compile "
                    + "lock-spring-boot-autoconfigure first (the spring-boot-configuration-processor writes it), "
                    + "for example with: " + REGENERATE_COMMAND);
        }
        Path additional = classes.resolve(ADDITIONAL);
        List<JsonNode> documents = new ArrayList<>(List.of(read(generated)));
        if (Files.isRegularFile(additional)) {
            documents.add(read(additional));
        }
        Map<String, String> groupModules = new LinkedHashMap<>();
        for (ModuleConfigurationMetadata.Module module : ModuleConfigurationMetadata
            .generate(ConfigurationReferenceTest.repositoryRoot())) {
            documents.add(module.metadata());
            module.metadata()
                .path("groups")
                .forEach(group -> groupModules.put(group.path("name").asText(), module.name()));
        }
        return fromMetadata(documents, groupModules);
    }

    /**
     * Builds the reference from parsed metadata documents, each merged into the ones
     * before it; {@code groupModules} names the module of groups that another module
     * binds.
     */
    static ConfigurationReference fromMetadata(List<JsonNode> documents, Map<String, String> groupModules) {
        Map<String, JsonNode> entries = new TreeMap<>();
        Map<String, Map<String, String>> hints = new TreeMap<>();
        List<String> groups = new ArrayList<>();
        for (JsonNode document : documents) {
            for (JsonNode property : document.path("properties")) {
                String name = property.path("name").asText();
                if (!name.startsWith(DistributedLockProperties.PREFIX + ".")) {
                    continue;
                }
                JsonNode earlier = entries.get(name);
                entries.put(name, earlier == null ? property : fillIn(earlier, property));
            }
            for (JsonNode hint : document.path("hints")) {
                Map<String, String> values = new LinkedHashMap<>();
                for (JsonNode value : hint.path("values")) {
                    values.put(value.path("value").asText(), value.path("description").asText(""));
                }
                hints.putIfAbsent(hint.path("name").asText(), values);
            }
            for (JsonNode group : document.path("groups")) {
                String name = group.path("name").asText();
                if (!groups.contains(name)) {
                    groups.add(name);
                }
            }
        }
        Map<String, Property> properties = new LinkedHashMap<>();
        for (JsonNode entry : entries.values()) {
            String name = entry.path("name").asText();
            String type = entry.path("type").asText("");
            Map<String, String> values = hints.containsKey(name) ? hints.get(name) : enumValues(type);
            properties.put(name,
                    new Property(name, type, defaultValue(entry.get("defaultValue")),
                            entry.path("description").asText("").strip(), values,
                            simpleName(entry.path("sourceType").asText("the properties class"))));
        }
        return new ConfigurationReference(properties, groups, groupModules);
    }

    /** Every {@code distributed-lock.*} property, sorted by name. */
    public Map<String, Property> properties() {
        return properties;
    }

    /**
     * Problems that would make the reference useless for a property: no description, a
     * description that is not a sentence, no type. Empty when every property is
     * documented.
     */
    public List<String> documentationProblems() {
        List<String> problems = new ArrayList<>();
        for (Property property : properties.values()) {
            if (property.description().isEmpty()) {
                problems.add(property.name() + " has no description: add Javadoc to its field in " + property.source()
                        + " (what it does, valid values, format).");
            }
            else if (!property.description().endsWith(".")) {
                problems
                    .add(property.name() + "'s description does not end with a full stop: '" + property.description()
                            + "'. Write it as sentences in the field's Javadoc in " + property.source() + ".");
            }
            if (property.type().isEmpty()) {
                problems.add(property.name() + " has no type in the metadata.");
            }
        }
        return problems;
    }

    /** The page, as Markdown. */
    public String markdown() {
        StringBuilder page = new StringBuilder();
        page.append("# Configuration reference\n\n");
        page.append("<!-- Generated by io.github.distlock.docs.ConfigurationReference from the configuration "
                + "metadata; do not edit by hand. Regenerate with:\n     ")
            .append(REGENERATE_COMMAND)
            .append("\n-->\n\n");
        page.append("Every `distributed-lock.*` property the starter and its store modules read, generated from the "
                + "metadata that Spring Boot's configuration processor writes from the properties classes (the same "
                + "text your IDE shows when it completes a property). The [user guide](guide.md#configuration) "
                + "explains when to change them.\n\n");
        page.append("""
                - **Durations** take a number and a unit: `500ms`, `30s`, `5m`, `2h`, `1d` (also `ns`, `us`), or
                  ISO-8601 such as `PT30S`. A bare number means milliseconds: `default-ttl=5000` is 5 seconds. (In
                  the `@DistributedLock` annotation a bare number is rejected, because its unit would be a guess.)
                - **Lists** are comma-separated in `.properties` (`a,b,c`) or YAML sequences.
                - **Names** bind relaxed, as in every Spring Boot application: `distributed-lock.default-ttl`,
                  `distributed-lock.defaultTtl`, or the environment variable `DISTRIBUTEDLOCK_DEFAULTTTL`.
                - **Everything is checked at startup**: a bad value stops the application with a message that names
                  the property, the value and the fix, and so does an unknown name under `distributed-lock.` (a typo
                  such as `default-tll` gets the nearest valid name suggested).
                - **Modules**: a section whose title names a module (`lock-etcd`, `lock-zookeeper`) applies with that
                  module on the class path. The ShedLock provider (`lock-shedlock`) and the Spring Integration
                  registry (`lock-spring-integration`) have no properties of their own: their locks take the core
                  ones, such as `default-ttl`.

                """);
        Map<String, List<Property>> sections = sections();
        page.append("| section | module | properties |\n|---|---|---|\n");
        sections.forEach((group, members) -> page.append("| [")
            .append(title(group))
            .append("](#")
            .append(anchor(title(group)))
            .append(") | `")
            .append(groupModules.getOrDefault(group, STARTER))
            .append("` | ")
            .append(members.size())
            .append(" |\n"));
        page.append('\n');
        sections.forEach((group, members) -> {
            page.append("## ").append(title(group)).append("\n\n");
            String[] section = SECTIONS.get(group);
            if (section != null) {
                page.append(section[1]).append("\n\n");
            }
            page.append("| property | type | default | description |\n|---|---|---|---|\n");
            for (Property property : members) {
                page.append("| `")
                    .append(property.name())
                    .append("` | ")
                    .append(typeName(property))
                    .append(" | ")
                    .append(property.defaultValue() == null ? "(none)"
                            : property.defaultValue().isEmpty() ? "(empty)" : "`" + property.defaultValue() + "`")
                    .append(" | ")
                    .append(cell(describe(property)))
                    .append(" |\n");
            }
            page.append('\n');
        });
        return page.toString();
    }

    /**
     * The properties under each group, known groups first in their order, the rest by
     * name.
     */
    private Map<String, List<Property>> sections() {
        List<String> order = new ArrayList<>(SECTIONS.keySet());
        groups.stream().filter(group -> !order.contains(group)).sorted().forEach(order::add);
        Map<String, List<Property>> sections = new LinkedHashMap<>();
        order.forEach(group -> sections.put(group, new ArrayList<>()));
        for (Property property : properties.values()) {
            // The innermost group a property belongs to:
            // distributed-lock.watchdog.enabled goes to the watchdog.
            String owner = order.stream()
                .filter(group -> property.name().startsWith(group + "."))
                .max(Comparator.comparingInt(String::length))
                .orElse(DistributedLockProperties.PREFIX);
            sections.get(owner).add(property);
        }
        sections.values().removeIf(List::isEmpty);
        return sections;
    }

    private static String title(String group) {
        String[] section = SECTIONS.get(group);
        if (section != null) {
            return section[0];
        }
        String last = group.substring(group.lastIndexOf('.') + 1).replace('-', ' ');
        return Character.toUpperCase(last.charAt(0)) + last.substring(1);
    }

    /** GitHub's heading anchor: lower case, spaces to hyphens, punctuation dropped. */
    private static String anchor(String title) {
        return title.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 -]", "").replace(' ', '-');
    }

    private static String describe(Property property) {
        if (property.values().isEmpty()) {
            return property.description();
        }
        StringBuilder text = new StringBuilder(property.description()).append(" Values: ");
        List<String> values = new ArrayList<>();
        property.values()
            .forEach((value, meaning) -> values
                .add("`" + value + "`" + (meaning.isEmpty() ? "" : ": " + meaning.replaceAll("\\.$", ""))));
        return text.append(String.join("; ", values)).append('.').toString();
    }

    /**
     * The type as a user writes it: {@code duration} rather than
     * {@code java.time.Duration}.
     */
    static String typeName(Property property) {
        return switch (property.type()) {
            case "java.lang.Boolean", "boolean" -> "boolean";
            case "java.lang.Integer", "int" -> "int";
            case "java.lang.Long", "long" -> "long";
            case "java.lang.Double", "double" -> "number";
            case "java.lang.String" -> "string";
            case "java.time.Duration" -> "duration";
            case "java.util.List<java.lang.String>", "java.util.Set<java.lang.String>" -> "list of strings";
            default -> property.values().isEmpty() ? "`" + simpleName(property.type()) + "`" : "enum";
        };
    }

    private static String simpleName(String type) {
        return type.substring(Math.max(type.lastIndexOf('.'), type.lastIndexOf('$')) + 1);
    }

    /**
     * The constants of an enum type as Spring Boot binds them (lower case, hyphens), or
     * none for other types.
     */
    private static Map<String, String> enumValues(String type) {
        Map<String, String> values = new LinkedHashMap<>();
        try {
            Class<?> clazz = Class.forName(type, false, ConfigurationReference.class.getClassLoader());
            if (clazz.isEnum()) {
                for (Object constant : clazz.getEnumConstants()) {
                    values.put(((Enum<?>) constant).name().toLowerCase(Locale.ROOT).replace('_', '-'), "");
                }
            }
        }
        catch (ClassNotFoundException | LinkageError ex) {
            // Not a class (a generic or a primitive type): no values to list.
        }
        return values;
    }

    private static String defaultValue(JsonNode value) {
        if (value == null || value.isNull()) {
            return null;
        }
        if (value.isArray()) {
            List<String> items = new ArrayList<>();
            value.forEach(item -> items.add(item.asText()));
            return items.isEmpty() ? null : String.join(",", items);
        }
        return value.asText();
    }

    /**
     * The additional entry's fields where the generated one has none, as the processor
     * merges them.
     */
    private static JsonNode fillIn(JsonNode generated, JsonNode additional) {
        var merged = ((com.fasterxml.jackson.databind.node.ObjectNode) generated).deepCopy();
        additional.fields().forEachRemaining(field -> {
            if (!merged.hasNonNull(field.getKey())) {
                merged.set(field.getKey(), field.getValue());
            }
        });
        return merged;
    }

    /**
     * Text that may sit in a Markdown table cell: one line, no unescaped pipe, no angle
     * bracket read as HTML.
     */
    private static String cell(String text) {
        return text.replace("\r", "").replace("\n", " ").replace("|", "\\|").replace("<", "&lt;");
    }

    private static JsonNode read(Path file) {
        try {
            return new ObjectMapper().readTree(file.toFile());
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Cannot read the configuration metadata " + file, ex);
        }
    }

    /**
     * Where the compiled main classes (and the processor's metadata) are: target/classes.
     */
    private static Path classesDirectory() {
        try {
            return Path.of(DistributedLockProperties.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        }
        catch (URISyntaxException ex) {
            throw new IllegalStateException(ex);
        }
    }

}
