package io.github.distlock.docs;

import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The configuration metadata of the other modules that bind properties (lock-etcd,
 * lock-zookeeper), made from their sources by the same configuration processor their
 * build runs.
 * <p>
 * Their compiled metadata cannot be read instead: they depend on lock-contract-tests,
 * which depends on this module, so a reactor build compiles them after this module's
 * tests have run, and a test dependency on them would be a cycle. Running the processor
 * on the {@code @ConfigurationProperties} sources needs nothing but the sources, so the
 * reference is complete and checked in any build order.
 *
 * <pre>{@code
 * for (Module module : ModuleConfigurationMetadata.generate(repositoryRoot)) { ... }
 * }</pre>
 */
final class ModuleConfigurationMetadata {

    /** This module: its metadata is read from its compiled classes instead. */
    private static final String OWN_MODULE = "lock-spring-boot-autoconfigure";

    /** The bill of materials, which lists every module an application can depend on. */
    private static final String BOM = "lock-bom/pom.xml";

    private static final Pattern BOM_ARTIFACT = Pattern.compile("<artifactId>(lock-[a-z0-9-]+)</artifactId>");

    private static final String PROCESSOR = "org.springframework.boot.configurationprocessor."
            + "ConfigurationMetadataAnnotationProcessor";

    /**
     * The annotation on a type: at the start of a line, where a formatted source has it
     * on a class, never on a (indented) method or in a comment.
     */
    private static final Pattern PROPERTIES_CLASS = Pattern.compile("^@ConfigurationProperties\\b", Pattern.MULTILINE);

    private ModuleConfigurationMetadata() {
    }

    /**
     * One metadata document per published module (other than this one) that has a
     * {@code @ConfigurationProperties} class, in module-name order.
     * @throws IllegalStateException if the processor fails on a module, with the
     * compiler's messages
     */
    static List<Module> generate(Path repositoryRoot) {
        List<Module> modules = new ArrayList<>();
        for (Path module : modules(repositoryRoot)) {
            List<Path> sources = propertiesSources(module.resolve("src/main/java"));
            if (!sources.isEmpty()) {
                modules.add(new Module(module.getFileName().toString(), process(module, sources)));
            }
        }
        return modules;
    }

    /** A module's name and the metadata its properties classes give. */
    record Module(String name, JsonNode metadata) {
    }

    /**
     * The modules lock-bom lists, which are those an application can add: the sample and
     * the benchmarks may have properties of their own, which are not the starter's.
     */
    private static List<Path> modules(Path root) {
        Set<String> published = new LinkedHashSet<>();
        Matcher artifact = BOM_ARTIFACT.matcher(read(root.resolve(BOM)));
        while (artifact.find()) {
            published.add(artifact.group(1));
        }
        if (published.isEmpty()) {
            throw new IllegalStateException("No module listed in " + root.resolve(BOM) + ", where the configuration "
                    + "reference looks for the modules whose properties it documents.");
        }
        try (Stream<Path> children = Files.list(root)) {
            return children.filter(dir -> published.contains(dir.getFileName().toString()))
                .filter(dir -> Files.isDirectory(dir.resolve("src/main/java")))
                .filter(dir -> !dir.getFileName().toString().equals(OWN_MODULE))
                .sorted()
                .toList();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static List<Path> propertiesSources(Path sourceRoot) {
        try (Stream<Path> files = Files.walk(sourceRoot)) {
            return files.filter(file -> file.toString().endsWith(".java"))
                .filter(file -> PROPERTIES_CLASS.matcher(read(file)).find())
                .sorted()
                .toList();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Runs the configuration processor alone ({@code -proc:only}): the module's other
     * sources come from its source path as the properties classes need them, and nothing
     * is compiled.
     */
    private static JsonNode process(Path module, List<Path> sources) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null) {
            throw new IllegalStateException("The configuration reference needs a JDK's compiler to read the "
                    + "properties of " + module.getFileName() + "; run the tests on a JDK, not a JRE.");
        }
        Path output;
        try {
            output = Files.createTempDirectory("distlock-metadata-");
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        try {
            String classPath = classPath();
            List<String> arguments = new ArrayList<>(List.of("-proc:only", "-implicit:none", "-encoding", "UTF-8",
                    "-processor", PROCESSOR, "-processorpath", classPath, "-classpath", classPath, "-sourcepath",
                    module.resolve("src/main/java").toString(), "-d", output.toString(),
                    // The module's hand-written metadata, merged as in its build.
                    "-Aorg.springframework.boot.configurationprocessor.additionalMetadataLocations="
                            + module.resolve("src/main/resources")));
            StringWriter messages = new StringWriter();
            boolean ok;
            try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
                ok = javac.getTask(messages, files, null, arguments, null, files.getJavaFileObjectsFromPaths(sources))
                    .call();
            }
            Path metadata = output.resolve(ConfigurationReference.GENERATED);
            if (!ok || !Files.isRegularFile(metadata)) {
                throw new IllegalStateException("The configuration processor could not read the properties of "
                        + module.getFileName() + " (" + sources + "):\n" + messages);
            }
            return new ObjectMapper().readTree(metadata.toFile());
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        finally {
            deleteQuietly(output);
        }
    }

    /**
     * The test's class path, plus the jars of what a properties class and the processor
     * need, in case the class path is a manifest-only jar.
     */
    private static String classPath() {
        Set<String> entries = new LinkedHashSet<>(
                List.of(System.getProperty("java.class.path").split(File.pathSeparator)));
        entries.add(location(ConfigurationProperties.class));
        entries.add(location(org.jspecify.annotations.Nullable.class));
        try {
            entries.add(location(Class.forName(PROCESSOR)));
        }
        catch (ClassNotFoundException ex) {
            throw new IllegalStateException("spring-boot-configuration-processor is not on the test class path of "
                    + OWN_MODULE + "; it is an optional dependency of its pom, which the reference needs.", ex);
        }
        return String.join(File.pathSeparator, entries);
    }

    private static String location(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        }
        catch (URISyntaxException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static void deleteQuietly(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(file -> file.toFile().delete());
        }
        catch (IOException ex) {
            // A temporary directory left behind is harmless.
        }
    }

}
