package io.github.distlock.benchmarks.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.distlock.benchmarks.adapter.OurApplication;

/**
 * Starts a fresh JVM with this JVM's class path to run one measurement, so that JIT
 * state, heap and leftover client threads of one implementation never bleed into
 * another's numbers, and so that several JVMs can contend like separate application
 * instances.
 *
 * <p>
 * A child reports through its standard output: a line starting with {@link #RESULT}
 * carries its JSON result, {@link #READY} says it is set up; every other line is echoed
 * with a prefix.
 */
public final class Forks {

    /** Prefix of the line that carries a child's result. */
    public static final String RESULT = "@@RESULT ";

    /** A child in a multi-process run is set up and waits for {@code GO}. */
    public static final String READY = "@@READY";

    /**
     * Heap of every forked JVM: fixed, so that no implementation runs with a different
     * one.
     */
    static final List<String> JVM_ARGS = List.of("-Xms1g", "-Xmx1g", "-XX:+UseG1GC");

    private Forks() {
    }

    /**
     * Runs {@code mainClass} in a new JVM and returns the JSON of its {@link #RESULT}
     * line.
     * @param mainClass a class with a {@code main} that prints one result line and exits
     * @param args its arguments
     * @param timeout when to give up and kill it
     * @return the JSON the child printed
     * @throws IllegalStateException if the child fails, prints no result, or times out;
     * with its output tail
     */
    public static String call(Class<?> mainClass, List<String> args, Duration timeout) {
        Process process = start(mainClass, args);
        // Reading the output blocks until the child exits, so the time limit is enforced
        // from outside.
        Thread killer = new Thread(() -> {
            try {
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    echo(mainClass, "killed: still running after " + timeout);
                    process.destroyForcibly();
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }, "fork-time-limit");
        killer.setDaemon(true);
        killer.start();
        Deque<String> tail = new ArrayDeque<>();
        String result = null;
        try (BufferedReader output = reader(process)) {
            String line;
            while ((line = output.readLine()) != null) {
                if (line.startsWith(RESULT)) {
                    result = line.substring(RESULT.length());
                }
                else {
                    echo(mainClass, line);
                    tail.addLast(line);
                    if (tail.size() > 40) {
                        tail.removeFirst();
                    }
                }
            }
            process.waitFor();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a fork", ex);
        }
        finally {
            process.destroyForcibly();
        }
        if (process.exitValue() != 0 || result == null) {
            throw new IllegalStateException(mainClass.getSimpleName() + " fork " + args + " failed with exit code "
                    + process.exitValue() + (result == null ? " and no result" : "") + "; its last output:\n"
                    + String.join("\n", tail));
        }
        return result;
    }

    /**
     * Starts {@code mainClass} in a new JVM with stdout and stderr merged, stdin a pipe.
     * @param mainClass the main class
     * @param args its arguments
     * @return the running process
     */
    public static Process start(Class<?> mainClass, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_ARGS);
        // A Redlock node timeout set for this run (HarnessSettings) holds in the child
        // too.
        String nodeTimeout = System.getProperty(OurApplication.REDLOCK_NODE_TIMEOUT_PROPERTY);
        if (nodeTimeout != null) {
            command.add("-D" + OurApplication.REDLOCK_NODE_TIMEOUT_PROPERTY + "=" + nodeTimeout);
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(args);
        try {
            return new ProcessBuilder(command).redirectErrorStream(true).start();
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot start " + mainClass.getName(), ex);
        }
    }

    /**
     * @param process a child
     * @return its merged output as text
     */
    static BufferedReader reader(Process process) {
        return new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    static void echo(Class<?> mainClass, String line) {
        System.out.println("  [" + mainClass.getSimpleName() + "] " + line);
    }

    /**
     * Prints the result line a child's parent is waiting for, then ends the JVM: client
     * libraries leave non-daemon threads behind that would otherwise keep it alive.
     * @param result the value to report
     */
    public static void reportAndExit(Object result) {
        System.out.println(RESULT + Json.line(result));
        System.out.flush();
        System.exit(0);
    }

}
