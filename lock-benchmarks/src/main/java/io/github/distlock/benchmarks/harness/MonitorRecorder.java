package io.github.distlock.benchmarks.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.RespConnection;

/**
 * Records what {@code MONITOR} shows while a scenario runs, to count client round trips:
 * every command a client sends appears with the client's address, while commands a Lua
 * script runs appear as {@code [0 lua]} and are not round trips. Marks ({@code ECHO} of a
 * unique text) cut the stream into sections, so that counting starts and stops exactly
 * where the scenario says.
 *
 * <p>
 * Commands a client pipelines (sends without waiting) still show one by one; none of the
 * measured cycles pipelines, which the one-cycle transcript in the report makes visible.
 */
public final class MonitorRecorder implements AutoCloseable {

    private static final String MARK_PREFIX = "bench-mark-";

    private final RedisTestServer server;

    private final RespConnection connection;

    private final Thread reader;

    private final List<String> lines = new ArrayList<>();

    private final String session = UUID.randomUUID().toString().substring(0, 8);

    private volatile boolean closing;

    /**
     * Opens a connection and issues {@code MONITOR}.
     * @param server the server to watch
     */
    public MonitorRecorder(RedisTestServer server) {
        this.server = server;
        try {
            // A long read timeout: an idle stretch without commands must not end the
            // recording.
            connection = RespConnection.open(server.host(), server.port(), Duration.ofMinutes(10));
            Object reply = connection.command("MONITOR");
            if (!"OK".equals(reply)) {
                throw new IllegalStateException("MONITOR answered " + reply);
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        reader = new Thread(this::read, "monitor-reader");
        reader.setDaemon(true);
        reader.start();
    }

    private void read() {
        try {
            while (true) {
                Object line = connection.readReply();
                synchronized (lines) {
                    lines.add(String.valueOf(line));
                    lines.notifyAll();
                }
            }
        }
        catch (IOException | RuntimeException ex) {
            if (!closing) {
                synchronized (lines) {
                    lines.add("monitor-error " + ex);
                    lines.notifyAll();
                }
            }
        }
    }

    /**
     * Puts a mark into the stream and waits until MONITOR has delivered it, so that
     * everything sent before it has been recorded.
     * @param name the mark's name
     */
    public void mark(String name) {
        String text = MARK_PREFIX + session + "-" + name;
        server.command("ECHO", text);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        synchronized (lines) {
            while (indexOfMark(name) < 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("MONITOR did not deliver mark " + name);
                }
                try {
                    lines.wait(Math.max(1, left / 1_000_000));
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", ex);
                }
            }
        }
    }

    /**
     * The commands clients sent between two marks (script-internal commands and marks
     * left out).
     * @param from the earlier mark
     * @param to the later mark
     * @return the raw MONITOR lines
     */
    public List<String> clientCommandsBetween(String from, String to) {
        List<String> result = new ArrayList<>();
        for (String line : between(from, to)) {
            if (!isScriptInternal(line) && !line.contains(MARK_PREFIX)) {
                result.add(line);
            }
        }
        return result;
    }

    /**
     * Every command between two marks, script-internal ones included, marks left out.
     * @param from the earlier mark
     * @param to the later mark
     * @return the raw MONITOR lines
     */
    public List<String> allCommandsBetween(String from, String to) {
        return between(from, to).stream().filter(line -> !line.contains(MARK_PREFIX)).toList();
    }

    private List<String> between(String from, String to) {
        synchronized (lines) {
            int start = indexOfMark(from);
            int end = indexOfMark(to);
            if (start < 0 || end < start) {
                throw new IllegalStateException("marks " + from + " and " + to + " not both recorded in order");
            }
            return new ArrayList<>(lines.subList(start + 1, end));
        }
    }

    private int indexOfMark(String name) {
        String text = MARK_PREFIX + session + "-" + name + "\"";
        for (int i = lines.size() - 1; i >= 0; i--) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * @param line a MONITOR line such as {@code 1700000000.1 [0 lua] "get" "k"}
     * @return whether a script ran it (not a round trip)
     */
    static boolean isScriptInternal(String line) {
        int open = line.indexOf('[');
        int close = line.indexOf(']', open + 1);
        return open >= 0 && close > open && line.substring(open, close).endsWith(" lua");
    }

    /**
     * A MONITOR line shortened for a transcript: without the timestamp, long arguments
     * (tokens) abbreviated.
     * @param line a raw MONITOR line
     * @return e.g. {@code [client] "SET" "floor:k" "3f2a…" "NX" "PX" "30000"}
     */
    public static String readable(String line) {
        int open = line.indexOf('[');
        int close = line.indexOf(']', open + 1);
        if (open < 0 || close < 0) {
            return line;
        }
        String source = line.substring(open + 1, close).endsWith(" lua") ? "[lua]   " : "[client]";
        StringBuilder out = new StringBuilder(source);
        for (String argument : line.substring(close + 1).trim().split("\" \"")) {
            String bare = argument.replace("\"", "");
            out.append(" \"").append(bare.length() > 40 ? bare.substring(0, 37) + "..." : bare).append('"');
        }
        return out.toString();
    }

    @Override
    public void close() {
        closing = true;
        connection.close();
        try {
            reader.join(5_000);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

}
