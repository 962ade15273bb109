package io.github.distlock.testsupport;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Every {@code redis-server} process this JVM started and has not yet seen exit, with a
 * shutdown hook that kills whatever is left.
 *
 * <p>
 * Why: a test that fails before its {@code close()} (or a developer stopping a run
 * half-way) must not leave servers behind; they would hold ports and memory, and paused
 * ones would stay frozen forever. A JVM killed with SIGKILL cannot run hooks, which is
 * the one case this cannot cover.
 */
final class LiveRedisProcesses {

    /** Process to its temp directory, deleted too when the hook has to clean up. */
    private static final Map<Process, Path> LIVE = new ConcurrentHashMap<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(LiveRedisProcesses::killAll, "redis-test-server-reaper"));
    }

    private LiveRedisProcesses() {
    }

    static void register(Process process, Path directory) {
        LIVE.put(process, directory);
    }

    static void unregister(Process process) {
        LIVE.remove(process);
    }

    static int count() {
        LIVE.keySet().removeIf(process -> !process.isAlive());
        return LIVE.size();
    }

    private static void killAll() {
        LIVE.forEach((process, directory) -> {
            if (process.isAlive()) {
                System.err.println("lock-test-support: killing redis-server pid " + process.pid()
                        + " that was never closed (" + directory + ")");
                // A stopped process does die from SIGKILL, but resuming first also lets
                // the kernel tear down its
                // sockets promptly and mirrors what close() does.
                Signals.send(process.pid(), "CONT");
                process.destroyForcibly();
                try {
                    process.waitFor(2, TimeUnit.SECONDS);
                }
                catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            deleteRecursively(directory);
        });
        LIVE.clear();
    }

    /** Best effort: a temp directory that cannot be deleted must never fail a test. */
    static void deleteRecursively(Path directory) {
        if (directory == null || !Files.exists(directory)) {
            return;
        }
        try {
            Files.walkFileTree(directory, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        }
        catch (IOException ignored) {
            // Left for the OS to clean up with the rest of the temp directory.
        }
    }

    /**
     * Sends POSIX signals with {@code kill}, since {@link Process} can only send TERM and
     * KILL.
     */
    static final class Signals {

        private Signals() {
        }

        /**
         * @return whether {@code kill} exited with 0, i.e. the process existed and the
         * signal was sent
         */
        static boolean send(long pid, String signal) {
            try {
                Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
                if (!kill.waitFor(5, TimeUnit.SECONDS)) {
                    kill.destroyForcibly();
                    return false;
                }
                return kill.exitValue() == 0;
            }
            catch (IOException e) {
                return false;
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }

    }

}
