package io.github.distlock.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

import org.junit.jupiter.api.Assumptions;

/**
 * The wall clock of one {@code redis-server} run under libfaketime, as set up by
 * {@link RedisTestServer.Builder#withFakeClock()} and moved by
 * {@link RedisTestServer#jumpClock(Duration)}.
 *
 * <p>
 * How it works, checked against Debian's redis-server 7.0 and libfaketime 0.9.10:
 * <ul>
 * <li>Redis 7.0 computes key expiry from the wall clock ({@code mstime()}, i.e.
 * {@code gettimeofday}): a {@code SET ... PX} stores an absolute deadline, and a key is
 * expired once the wall clock passes it. So a step of the server's wall clock moves every
 * deadline's distance at once, as an NTP step would.</li>
 * <li>The offset lives in a file named by {@code FAKETIME_TIMESTAMP_FILE}, in
 * libfaketime's relative form ({@code +12.500000}); {@code FAKETIME_NO_CACHE=1} makes
 * libfaketime read it at every clock call, so a jump counts from the server's next clock
 * read. The file is replaced by an atomic rename, never half-written.</li>
 * <li>The monotonic clock is left real ({@code FAKETIME_DONT_FAKE_MONOTONIC=1}): a real
 * clock step moves only wall time, and Redis runs its timers on the monotonic clock,
 * which must not go backwards.</li>
 * <li>Debian links redis-server against the shared libjemalloc, which clashes with
 * libfaketime (libfaketime's start-up allocates, jemalloc's start-up reads the clock: the
 * process hangs; libfaketime issue 130). Preloading glibc right after libfaketime lets
 * glibc's {@code malloc} serve the process instead, which breaks the cycle.
 * {@code INFO memory}'s allocator figures are meaningless under the fake clock, and
 * {@code activedefrag} (jemalloc-only calls on glibc's memory) must stay off, as it is by
 * default.</li>
 * <li>Every clock read then costs a small file read: a server under the fake clock
 * answers about half as fast. Fine for tests; keep benchmarks off it.</li>
 * </ul>
 */
final class FakeClock {

    /** System property naming the libfaketime shared library to preload. */
    static final String LIBRARY_PROPERTY = "faketime.library";

    /** Environment variable naming the libfaketime shared library to preload. */
    static final String LIBRARY_VARIABLE = "FAKETIME_LIBRARY";

    /** Where Debian, Fedora and a source install put the library. */
    private static final List<String> LIBRARY_CANDIDATES = List.of(
            "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
            "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib64/faketime/libfaketime.so.1",
            "/usr/lib/faketime/libfaketime.so.1", "/usr/local/lib/faketime/libfaketime.so.1");

    private final Path library;

    private final Path offsetFile;

    private Duration offset = Duration.ZERO;

    FakeClock(Path library, Path directory) {
        this.library = Objects.requireNonNull(library, "library");
        this.offsetFile = directory.resolve("faketime-offset");
        writeOffset(Duration.ZERO);
    }

    /**
     * The libfaketime library, or the test's end: outside CI a missing library skips the
     * test with the reason, on CI ({@code CI=true}) it fails it, so that a CI machine
     * without the package cannot pass by skipping.
     */
    static Path requireLibrary() {
        String configured = System.getProperty(LIBRARY_PROPERTY);
        if (configured == null || configured.isBlank()) {
            configured = System.getenv(LIBRARY_VARIABLE);
        }
        List<String> candidates = configured == null || configured.isBlank() ? LIBRARY_CANDIDATES : List.of(configured);
        for (String candidate : candidates) {
            if (Files.isReadable(Path.of(candidate))) {
                return Path.of(candidate);
            }
        }
        String message = "RedisTestServer.builder().withFakeClock() needs libfaketime (Linux only), and found none at "
                + candidates + ". Install Debian's faketime and libfaketime packages (apt-get install faketime "
                + "libfaketime, as .ci/run does), or name the library with -D" + LIBRARY_PROPERTY + "=... or "
                + LIBRARY_VARIABLE + ".";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException(message + " This is CI (CI=true), so the test fails rather than skips.");
        }
        Assumptions.abort(message + " Skipped because this is not CI (CI is not true).");
        throw new AssertionError("unreachable: Assumptions.abort throws");
    }

    /**
     * Sets up a redis-server process's environment ({@code ProcessBuilder.environment()})
     * to run on this clock.
     */
    void configure(Map<String, String> environment) {
        // glibc after libfaketime: libfaketime's own lookups (RTLD_NEXT) must find glibc,
        // and glibc's malloc must
        // win over the libjemalloc that Debian's redis-server links (see the class
        // comment).
        String preload = library + " libc.so.6";
        String inherited = environment.get("LD_PRELOAD");
        if (inherited != null && !inherited.isBlank()) {
            preload += " " + inherited;
        }
        environment.put("LD_PRELOAD", preload);
        environment.put("FAKETIME_TIMESTAMP_FILE", offsetFile.toString());
        environment.put("FAKETIME_NO_CACHE", "1");
        environment.put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        environment.put("DONT_FAKE_MONOTONIC", "1"); // the spelling of libfaketime before
                                                     // 0.9.10
        environment.remove("FAKETIME"); // so that only the file sets the time
    }

    /**
     * Fails unless the process loaded libfaketime: a statically linked redis-server (such
     * as some bundled fallback binaries) ignores {@code LD_PRELOAD} and would run on the
     * real clock, making every jump a silent no-op.
     */
    void requireLoadedBy(long pid, Path binary) {
        Path maps = Path.of("/proc", Long.toString(pid), "maps");
        String loaded;
        try {
            loaded = Files.readString(maps, StandardCharsets.UTF_8);
        }
        catch (IOException e) {
            throw new RedisStartupException(
                    "could not read " + maps + " to check that redis-server pid " + pid + " runs on the fake clock", e);
        }
        if (!loaded.contains("libfaketime")) {
            throw new RedisStartupException("withFakeClock(): " + binary + " (pid " + pid + ") did not load " + library
                    + ", so its clock cannot be moved; a statically linked redis-server ignores LD_PRELOAD. Use a "
                    + "dynamically linked one, e.g. Debian's redis-server package, or -D"
                    + RedisServerBinary.SYSTEM_PROPERTY + "=... to name one.", null);
        }
    }

    /**
     * Moves the clock by {@code by} (forward if positive) and returns the new offset from
     * real time.
     */
    synchronized Duration jump(Duration by) {
        Duration next = offset.plus(by);
        writeOffset(next);
        offset = next;
        return next;
    }

    synchronized Duration offset() {
        return offset;
    }

    private void writeOffset(Duration value) {
        Path temporary = offsetFile.resolveSibling(offsetFile.getFileName() + ".new");
        try {
            Files.writeString(temporary, format(value) + "\n", StandardCharsets.US_ASCII);
            try {
                Files.move(temporary, offsetFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            catch (AtomicMoveNotSupportedException e) {
                Files.move(temporary, offsetFile, StandardCopyOption.REPLACE_EXISTING);
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not write the fake clock offset to " + offsetFile, e);
        }
    }

    /**
     * libfaketime's relative form: a sign, whole seconds, and microseconds, e.g.
     * {@code -1.250000}.
     */
    static String format(Duration value) {
        Duration magnitude = value.abs();
        return String.format(Locale.ROOT, "%s%d.%06d", value.isNegative() ? "-" : "+", magnitude.toSeconds(),
                magnitude.toNanosPart() / 1_000);
    }

}
