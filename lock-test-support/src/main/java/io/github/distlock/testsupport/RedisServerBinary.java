package io.github.distlock.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import java.util.logging.Logger;

/**
 * Finds the {@code redis-server} executable that the fixtures run.
 *
 * <p>
 * Order of preference, first match wins:
 * <ol>
 * <li>the system property {@value #SYSTEM_PROPERTY} or the environment variable
 * {@value #ENVIRONMENT_VARIABLE} &ndash; so a developer or CI can pin an exact Redis
 * version;</li>
 * <li>{@code redis-server} on the {@code PATH} &ndash; usually a current,
 * distribution-built Redis;</li>
 * <li>the binary bundled in the {@code embedded-redis} jar, extracted to a temporary file
 * once per JVM &ndash; so the tests still run on a machine without Redis installed.</li>
 * </ol>
 * The choice is logged once (java.util.logging, INFO), because "which Redis did this run
 * use" is the first question when a test behaves differently on two machines.
 */
public final class RedisServerBinary {

    /** System property naming the {@code redis-server} executable to use. */
    public static final String SYSTEM_PROPERTY = "redis.server.bin";

    /** Environment variable naming the {@code redis-server} executable to use. */
    public static final String ENVIRONMENT_VARIABLE = "REDIS_SERVER_BIN";

    private static final Logger LOG = Logger.getLogger(RedisServerBinary.class.getName());

    // Cached only on success, so a failed lookup is reported again with its real cause
    // (not as a
    // NoClassDefFoundError, as a failing static initializer would be).
    private static Path resolved;

    private static Path bundled;

    private RedisServerBinary() {
    }

    /**
     * The executable to run, resolved once per JVM as described in the class comment.
     * @return an existing, executable file
     * @throws IllegalStateException when a configured path is not executable, or nothing
     * is found
     */
    public static synchronized Path resolve() {
        if (resolved == null) {
            resolved = find();
        }
        return resolved;
    }

    /**
     * The binary bundled in the {@code embedded-redis} jar for this OS and CPU, extracted
     * once per JVM, regardless of what {@link #resolve()} chose. Lets a test check the
     * fallback itself on a machine that has Redis installed.
     * @return an extracted, executable file (deleted when the JVM exits)
     * @throws IllegalStateException when no binary is bundled for this platform
     */
    public static synchronized Path bundled() {
        if (bundled == null) {
            bundled = extract();
        }
        return bundled;
    }

    private static Path find() {
        String configured = System.getProperty(SYSTEM_PROPERTY);
        String source = "system property " + SYSTEM_PROPERTY;
        if (isBlank(configured)) {
            configured = System.getenv(ENVIRONMENT_VARIABLE);
            source = "environment variable " + ENVIRONMENT_VARIABLE;
        }
        if (!isBlank(configured)) {
            Path path = Path.of(configured.trim());
            if (!Files.isRegularFile(path) || !Files.isExecutable(path)) {
                throw new IllegalStateException(source + " names " + path + ", which is not an executable file");
            }
            String from = source;
            LOG.info(() -> "Using redis-server from " + from + ": " + path);
            return path;
        }
        Path onPath = findOnPath();
        if (onPath != null) {
            LOG.info(() -> "Using redis-server found on PATH: " + onPath);
            return onPath;
        }
        Path extracted = bundled();
        LOG.info(() -> "No redis-server configured or on PATH; using the binary bundled in embedded-redis: "
                + extracted);
        return extracted;
    }

    private static Path findOnPath() {
        String path = System.getenv("PATH");
        if (isBlank(path)) {
            return null;
        }
        for (String directory : path.split(File.pathSeparator)) {
            if (directory.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(directory, "redis-server");
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    private static Path extract() {
        String resource = bundledResourceName();
        try (InputStream binary = RedisServerBinary.class.getClassLoader().getResourceAsStream(resource)) {
            if (binary == null) {
                throw new IllegalStateException("resource " + resource
                        + " not found on the classpath; is com.github.codemonstur:embedded-redis present?");
            }
            Path target = Files.createTempFile("redis-server-", "");
            target.toFile().deleteOnExit();
            Files.copy(binary, target, StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwx------"));
            return target;
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not extract bundled " + resource, e);
        }
    }

    /** Names of the binaries inside embedded-redis 1.4.x. */
    private static String bundledResourceName() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
        boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
        boolean x86 = arch.equals("x86") || arch.equals("i386") || arch.equals("i686");
        if (os.contains("linux")) {
            if (x64) {
                return "redis-server-6.2.6-v5-linux-amd64";
            }
            if (arm64) {
                return "redis-server-6.2.7-linux-arm64";
            }
            if (x86) {
                return "redis-server-6.2.7-linux-386";
            }
        }
        else if (os.contains("mac")) {
            if (x64) {
                return "redis-server-6.2.6-v5-darwin-amd64";
            }
            if (arm64) {
                return "redis-server-6.2.6-v5-darwin-arm64";
            }
        }
        throw new IllegalStateException("no redis-server bundled for " + os + "/" + arch + "; install Redis or set "
                + SYSTEM_PROPERTY + " / " + ENVIRONMENT_VARIABLE);
    }

    private static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }

}
