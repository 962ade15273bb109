package io.github.distlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java block of the README is a whole compilation unit (imports and a class) that
 * compiles against the library, so a reader can paste it into an application as it
 * stands. Each block is compiled on its own with {@code javac} against this module's test
 * class path (the library, Spring, Spring JDBC); an error is reported with the README
 * line it comes from.
 */
class ReadmeSnippetsTest {

    /** A fenced Java block: its body starts on the line after the fence. */
    private static final Pattern BLOCK = Pattern.compile("(?m)^```java\\n(.*?)^```$", Pattern.DOTALL);

    /** A public top-level type must live in a file of its name. */
    private static final Pattern PUBLIC_TYPE = Pattern
        .compile("(?m)^public\\s+(?:final\\s+|abstract\\s+)*(?:class|interface|record|enum|@interface)\\s+(\\w+)");

    @TempDir
    Path work;

    @Test
    void everyJavaBlockOfTheReadmeCompilesAgainstTheLibrary() throws IOException {
        String readme = Files.readString(ConfigurationReferenceTest.repositoryRoot().resolve("README.md"),
                StandardCharsets.UTF_8);

        List<Block> blocks = blocks(readme);
        List<String> problems = compile(blocks);

        assertThat(blocks).as("Java blocks in README.md").hasSizeGreaterThanOrEqualTo(2);
        assertThat(blocks).as("README blocks that put @DistributedLock on a method")
            .anyMatch(block -> block.code().contains("@DistributedLock"));
        assertThat(problems).as("compile errors in README.md's Java blocks").isEmpty();
    }

    @Test
    void annotationsStackedOnNothingAreReportedWithTheirReadmeLine() throws IOException {
        // The README's block before issue 26: four @DistributedLock lines above a
        // statement, not on methods.
        String readme = String.join("\n", "# Use it", "", "```java", "import java.time.Duration;", "",
                "import io.github.distlock.DistributedLock;", "import io.github.distlock.LockHandle;",
                "import io.github.distlock.LockService;", "", "@DistributedLock(key = \"#orderId\")",
                "@DistributedLock(key = \"#order.customer.id\", waitTime = \"0s\")",
                "@DistributedLock(key = \"@tenants.current() + ':' + #id\", ttl = \"${jobs.lock-ttl}\")",
                "@DistributedLock", "",
                "try (LockHandle lock = lockService.lock(\"order:\" + id, Duration.ofSeconds(30), "
                        + "Duration.ofSeconds(3))) {",
                "    payments.capture(id, lock.fencingToken());", "}", "```", "");

        List<String> problems = compile(blocks(readme));

        assertThat(problems).isNotEmpty()
            .allMatch(problem -> problem.startsWith("README.md, line "))
            .anyMatch(problem -> problem.startsWith("README.md, line 15: ")); // the try,
                                                                              // after the
                                                                              // annotations
    }

    /** A Java block and the README line of its first line of code. */
    record Block(int firstLine, String code) {
    }

    private static List<Block> blocks(String readme) {
        List<Block> blocks = new ArrayList<>();
        Matcher block = BLOCK.matcher(readme);
        while (block.find()) {
            int firstLine = (int) readme.substring(0, block.start(1)).chars().filter(c -> c == '\n').count() + 1;
            blocks.add(new Block(firstLine, block.group(1)));
        }
        return blocks;
    }

    /**
     * Compiles each block as its own source file; returns the errors, each with the
     * README line.
     */
    private List<String> compile(List<Block> blocks) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertThat(javac).as("the JDK's compiler (run the tests on a JDK, not a JRE)").isNotNull();
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < blocks.size(); i++) {
            Block block = blocks.get(i);
            Matcher type = PUBLIC_TYPE.matcher(block.code());
            Path dir = Files.createDirectories(work.resolve("block" + i));
            Path source = dir.resolve((type.find() ? type.group(1) : "ReadmeBlock" + i) + ".java");
            Files.writeString(source, block.code(), StandardCharsets.UTF_8);
            DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
            try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT,
                    StandardCharsets.UTF_8)) {
                // Surefire's class path may be one manifest-only jar: javac follows its
                // Class-Path entries.
                List<String> options = List.of("-classpath", System.getProperty("java.class.path"), "-d",
                        Files.createDirectories(dir.resolve("classes")).toString(), "-proc:none", "-Xlint:none");
                javac.getTask(null, files, diagnostics, options, null, files.getJavaFileObjects(source)).call();
            }
            for (Diagnostic<? extends JavaFileObject> diagnostic : diagnostics.getDiagnostics()) {
                if (diagnostic.getKind() == Diagnostic.Kind.ERROR) {
                    long line = block.firstLine() + Math.max(diagnostic.getLineNumber(), 1) - 1;
                    problems.add("README.md, line " + line + ": " + diagnostic.getMessage(Locale.ROOT));
                }
            }
        }
        return problems;
    }

}
