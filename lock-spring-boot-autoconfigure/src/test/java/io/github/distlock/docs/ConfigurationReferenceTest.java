package io.github.distlock.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.distlock.docs.ConfigurationReference.Property;

/**
 * {@code docs/configuration.md} is what the configuration metadata says, and the property
 * names and defaults the other docs quote exist. Run with {@code -Ddocs.write=true} to
 * rewrite the page instead of checking it.
 */
class ConfigurationReferenceTest {

    /**
     * Names the docs quote knowing there is no such property: a typo spelt wrong on
     * purpose, to show the startup check that catches it, and a switch
     * benchmarks-analysis.md weighs and does not take.
     */
    private static final Set<String> DELIBERATE_TYPOS = Set.of("distributed-lock.default-tll",
            "distributed-lock.fencing");

    /**
     * Pages not checked: this reference itself, and the benchmark report that
     * lock-benchmarks generates.
     */
    private static final Set<String> GENERATED_PAGES = Set.of("configuration.md", "benchmarks.md");

    private static final Pattern PROPERTY_NAME = Pattern.compile("distributed-lock\\.[a-z0-9.*-]+");

    /**
     * A row of a hand-written table that quotes a default: | `distributed-lock.x` |
     * `default` | ...
     */
    private static final Pattern TABLE_ROW = Pattern
        .compile("^\\|\\s*`(distributed-lock\\.[a-z0-9.-]+)`\\s*\\|\\s*`([^`]*)`", Pattern.MULTILINE);

    /** Read once: the other modules' metadata takes a compiler run each. */
    private static ConfigurationReference reference;

    @BeforeAll
    static void readMetadata() {
        reference = ConfigurationReference.fromCompiledMetadata();
    }

    @Test
    void theConfigurationReferenceInDocsIsWhatTheMetadataSays() throws IOException {
        Path page = repositoryRoot().resolve("docs/configuration.md");
        String expected = reference.markdown();
        if (Boolean.getBoolean("docs.write")) {
            Files.writeString(page, expected, StandardCharsets.UTF_8);
            return;
        }
        String actual = Files.isRegularFile(page) ? Files.readString(page, StandardCharsets.UTF_8) : "";
        if (!actual.equals(expected)) {
            fail("docs/configuration.md is stale: it no longer matches the configuration metadata generated from "
                    + "the properties classes of this module, lock-etcd and lock-zookeeper ("
                    + firstDifference(actual, expected) + "). Do not edit it by hand; regenerate it with\n    "
                    + ConfigurationReference.REGENERATE_COMMAND + "\nand commit the result.");
        }
    }

    @Test
    void everyPropertyHasATypeAndADescriptionWrittenAsSentences() {
        assertThat(reference.properties()).as("distributed-lock.* properties in the metadata").hasSizeGreaterThan(20);
        assertThat(reference.documentationProblems()).isEmpty();
    }

    @Test
    void everyPropertyTheReadmeAndTheDocsNameExists() throws IOException {
        Set<String> known = new HashSet<>(reference.properties().keySet());
        known.addAll(otherModulesProperties());
        List<String> unknown = new ArrayList<>();
        for (Path doc : docsThatNameProperties()) {
            Matcher matcher = PROPERTY_NAME.matcher(Files.readString(doc, StandardCharsets.UTF_8));
            while (matcher.find()) {
                String name = matcher.group().replaceAll("[.*]+$", "");
                boolean exists = known.contains(name) || known.stream().anyMatch(p -> p.startsWith(name + "."));
                if (!exists && !DELIBERATE_TYPOS.contains(name)) {
                    unknown.add(repositoryRoot().relativize(doc) + ": " + name);
                }
            }
        }
        assertThat(unknown).as("property names in the docs that the starter does not have").isEmpty();
    }

    @Test
    void theDefaultsQuotedInHandWrittenTablesAreTheMetadataDefaults() throws IOException {
        Map<String, Property> properties = reference.properties();
        List<String> wrong = new ArrayList<>();
        int rows = 0;
        for (Path doc : docsThatNameProperties()) {
            Matcher row = TABLE_ROW.matcher(Files.readString(doc, StandardCharsets.UTF_8));
            while (row.find()) {
                Property property = properties.get(row.group(1));
                if (property == null || row.group(2).equals(property.defaultValue())) {
                    rows++; // an unknown name is the previous test's finding
                    continue;
                }
                wrong.add(repositoryRoot().relativize(doc) + ": " + row.group(1) + " says `" + row.group(2)
                        + "`, the metadata `" + property.defaultValue() + "`");
            }
        }
        assertThat(wrong).as("defaults quoted in the docs' tables that differ from the code").isEmpty();
        assertThat(rows).as("table rows checked (the README's short table at least)").isGreaterThanOrEqualTo(5);
    }

    /**
     * The properties that other modules (lock-etcd, lock-zookeeper) bind under
     * {@code distributed-lock}, as each lists them in
     * {@code META-INF/distributed-lock/property-groups} for the starter's unknown-name
     * check.
     */
    private static Set<String> otherModulesProperties() throws IOException {
        Set<String> names = new HashSet<>();
        try (Stream<Path> modules = Files.list(repositoryRoot())) {
            for (Path module : modules.toList()) {
                Path groups = module.resolve("src/main/resources/META-INF/distributed-lock/property-groups");
                if (Files.isRegularFile(groups)) {
                    for (String line : Files.readAllLines(groups, StandardCharsets.UTF_8)) {
                        String name = line.strip();
                        if (!name.isEmpty() && !name.startsWith("#")) {
                            names.add("distributed-lock." + name.replaceAll("\\.\\*$", ""));
                        }
                    }
                }
            }
        }
        return names;
    }

    /**
     * The README and every hand-written page under docs/, the migration guides included.
     */
    private static List<Path> docsThatNameProperties() throws IOException {
        Path root = repositoryRoot();
        List<Path> docs = new ArrayList<>(List.of(root.resolve("README.md")));
        try (Stream<Path> files = Files.walk(root.resolve("docs"))) {
            files.filter(file -> file.toString().endsWith(".md"))
                .filter(file -> !GENERATED_PAGES.contains(file.getFileName().toString()))
                .sorted()
                .forEach(docs::add);
        }
        return docs;
    }

    private static String firstDifference(String actual, String expected) {
        String[] was = actual.split("\n", -1);
        String[] is = expected.split("\n", -1);
        for (int line = 0; line < Math.max(was.length, is.length); line++) {
            String a = line < was.length ? was[line] : "<end of file>";
            String e = line < is.length ? is[line] : "<end of file>";
            if (!a.equals(e)) {
                return "first difference at line " + (line + 1) + ": the file has '" + abbreviate(a)
                        + "', the metadata gives '" + abbreviate(e) + "'";
            }
        }
        return "they differ";
    }

    private static String abbreviate(String line) {
        return line.length() > 120 ? line.substring(0, 117) + "..." : line;
    }

    /**
     * The directory with mvnw and docs/: Surefire runs in the module directory, one below
     * it.
     */
    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.isRegularFile(dir.resolve("mvnw")) && Files.isDirectory(dir.resolve("docs")))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException(
                    "No repository root (a directory with mvnw and docs/) above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }

}
