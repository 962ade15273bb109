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
import java.util.Optional;
import java.util.logging.Logger;

import org.junit.jupiter.api.Assumptions;

/**
 * Finds the server executable that the fixtures run: {@code redis-server}, or
 * {@code valkey-server} for a whole test run on Valkey.
 *
 * <p>
 * Which server: the system property {@value #SERVER_PROPERTY} or the environment variable
 * {@value #SERVER_VARIABLE}, {@code redis} (the default) or {@code valkey}. Every fixture
 * that is not handed a binary ({@link RedisTestServer}, {@link RedisTestCluster},
 * {@link RedisTestSentinelGroup}, the extensions) then runs it: <pre>{@code
 * ./mvnw -B -pl lock-contract-tests -am verify -Ddistlock.test.server=valkey -Dtest=ClusterLettuceLockContractTest
 * }</pre> Surefire hands Maven's {@code -D} user properties to the forked test JVMs, and
 * they inherit the environment.
 *
 * <p>
 * Redis, first match wins:
 * <ol>
 * <li>the system property {@value #SYSTEM_PROPERTY} or the environment variable
 * {@value #ENVIRONMENT_VARIABLE} &ndash; so a developer or CI can pin an exact Redis
 * version;</li>
 * <li>{@code redis-server} on the {@code PATH} &ndash; usually a current,
 * distribution-built Redis;</li>
 * <li>the binary bundled in the {@code embedded-redis} jar, extracted to a temporary file
 * once per JVM &ndash; so the tests still run on a machine without Redis installed.</li>
 * </ol>
 * Valkey, first match wins: the system property {@value #VALKEY_SYSTEM_PROPERTY} or the
 * environment variable {@value #VALKEY_ENVIRONMENT_VARIABLE}, then {@code valkey-server}
 * on the {@code PATH}. Nothing is bundled: a run on Valkey without one fails, rather than
 * quietly testing Redis.
 *
 * <p>
 * The choice is logged once (java.util.logging, INFO), because "which server did this run
 * use" is the first question when a test behaves differently on two machines;
 * {@link RedisTestServer} logs the product and version it finds running the first time it
 * starts each binary.
 */
public final class RedisServerBinary {

    /** System property naming the {@code redis-server} executable to use. */
    public static final String SYSTEM_PROPERTY = "redis.server.bin";

    /** Environment variable naming the {@code redis-server} executable to use. */
    public static final String ENVIRONMENT_VARIABLE = "REDIS_SERVER_BIN";

    /** System property naming the {@code valkey-server} executable to use. */
    public static final String VALKEY_SYSTEM_PROPERTY = "valkey.server.bin";

    /** Environment variable naming the {@code valkey-server} executable to use. */
    public static final String VALKEY_ENVIRONMENT_VARIABLE = "VALKEY_SERVER_BIN";

    /**
     * System property choosing the server of the whole run: {@code redis} (default) or
     * {@code valkey}.
     */
    public static final String SERVER_PROPERTY = "distlock.test.server";

    /**
     * Environment variable choosing the server of the whole run, read when
     * {@value #SERVER_PROPERTY} is unset.
     */
    public static final String SERVER_VARIABLE = "DISTLOCK_TEST_SERVER";

    private static final Logger LOG = Logger.getLogger(RedisServerBinary.class.getName());

    // Cached only on success, so a failed lookup is reported again with its real cause
    // (not as a
    // NoClassDefFoundError, as a failing static initializer would be).
    private static Path resolved;

    private static Path bundled;

    private static Path valkey;

    private RedisServerBinary() {
    }

    /**
     * The server every fixture runs unless handed a binary, chosen by
     * {@value #SERVER_PROPERTY} or {@value #SERVER_VARIABLE}.
     * @return {@link ServerKind#REDIS} unless {@code valkey} is chosen
     * @throws IllegalStateException for a value other than {@code redis} or
     * {@code valkey}
     */
    public static ServerKind server() {
        String chosen = System.getProperty(SERVER_PROPERTY);
        String source = "system property " + SERVER_PROPERTY;
        if (isBlank(chosen)) {
            chosen = System.getenv(SERVER_VARIABLE);
            source = "environment variable " + SERVER_VARIABLE;
        }
        return isBlank(chosen) ? ServerKind.REDIS : ServerKind.parse(chosen, source);
    }

    /**
     * The executable to run, of the {@linkplain #server() chosen server}, resolved once
     * per JVM as described in the class comment.
     * @return an existing, executable file
     * @throws IllegalStateException when a configured path is not executable, or nothing
     * is found
     */
    public static synchronized Path resolve() {
        if (resolved == null) {
            resolved = server() == ServerKind.VALKEY ? requiredValkey() : findRedis();
        }
        return resolved;
    }

    /**
     * The {@code valkey-server} from {@value #VALKEY_SYSTEM_PROPERTY},
     * {@value #VALKEY_ENVIRONMENT_VARIABLE} or the {@code PATH}, whichever server the run
     * chose: for a test about Valkey itself.
     * @return the executable, or empty when none is configured or on the {@code PATH}
     * @throws IllegalStateException when a configured path is not an executable file
     */
    public static synchronized Optional<Path> valkey() {
        if (valkey == null) {
            valkey = find(ServerKind.VALKEY, VALKEY_SYSTEM_PROPERTY, VALKEY_ENVIRONMENT_VARIABLE);
        }
        return Optional.ofNullable(valkey);
    }

    /**
     * The {@code valkey-server} for a test that needs one, or the test's end: outside CI
     * a missing one skips the test with the reason, on CI ({@code CI=true}) it fails it,
     * so that a CI machine without Valkey cannot pass by skipping (as with libfaketime).
     *
     * <pre>{@code
     * RedisTestCluster cluster = RedisTestCluster.start(3, RedisServerBinary.requireValkey());
     * }</pre>
     * @return the executable
     */
    public static Path requireValkey() {
        Optional<Path> found = valkey();
        if (found.isPresent()) {
            return found.get();
        }
        String message = "This test needs a valkey-server, but " + valkeyMissing();
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException(message + " This is CI (CI=true), so the test fails rather than skips.");
        }
        Assumptions.abort(message + " Skipped because this is not CI (CI is not true).");
        throw new AssertionError("unreachable: Assumptions.abort throws");
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

    private static Path requiredValkey() {
        Path found = valkey().orElseThrow(() -> new IllegalStateException("This run is on Valkey (" + SERVER_PROPERTY
                + " / " + SERVER_VARIABLE + "=valkey), but " + valkeyMissing()));
        LOG.info(() -> "This run uses Valkey (" + SERVER_PROPERTY + "=valkey): " + found);
        return found;
    }

    private static String valkeyMissing() {
        return "no valkey-server was found: set -D" + VALKEY_SYSTEM_PROPERTY + "=... or " + VALKEY_ENVIRONMENT_VARIABLE
                + ", or put valkey-server on the PATH. .ci/run builds one into /opt/valkey/bin from Debian's source "
                + "package (see the README's test section).";
    }

    private static Path findRedis() {
        Path found = find(ServerKind.REDIS, SYSTEM_PROPERTY, ENVIRONMENT_VARIABLE);
        if (found != null) {
            return found;
        }
        Path extracted = bundled();
        LOG.info(() -> "No redis-server configured or on PATH; using the binary bundled in embedded-redis: "
                + extracted);
        return extracted;
    }

    /**
     * The configured executable, else the one on the PATH, else {@code null}; logs what
     * it found.
     */
    private static Path find(ServerKind kind, String property, String variable) {
        String configured = System.getProperty(property);
        String source = "system property " + property;
        if (isBlank(configured)) {
            configured = System.getenv(variable);
            source = "environment variable " + variable;
        }
        if (!isBlank(configured)) {
            Path path = Path.of(configured.trim());
            if (!Files.isRegularFile(path) || !Files.isExecutable(path)) {
                throw new IllegalStateException(source + " names " + path + ", which is not an executable file");
            }
            String from = source;
            LOG.info(() -> "Using " + kind.executable() + " from " + from + ": " + path);
            return path;
        }
        Path onPath = findOnPath(kind.executable());
        if (onPath != null) {
            LOG.info(() -> "Using " + kind.executable() + " found on PATH: " + onPath);
        }
        return onPath;
    }

    private static Path findOnPath(String executable) {
        String path = System.getenv("PATH");
        if (isBlank(path)) {
            return null;
        }
        for (String directory : path.split(File.pathSeparator)) {
            if (directory.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(directory, executable);
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
