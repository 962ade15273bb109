package io.github.distlock.benchmarks.harness;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.github.distlock.testsupport.RedisTestServer;

/**
 * Server-side command counts from {@code INFO commandstats}, after a
 * {@code CONFIG RESETSTAT}.
 *
 * <p>
 * Redis 7 counts the commands a Lua script runs ({@code redis.call}) as well as the
 * {@code EVAL}/{@code EVALSHA} itself, so these are commands the server executed, not
 * client round trips; {@link MonitorRecorder} tells the two apart.
 */
public final class CommandStats {

    /** What the harness itself sends to read the stats; never counted. */
    private static final Set<String> OWN_COMMANDS = Set.of("info", "config|resetstat", "echo", "monitor");

    private CommandStats() {
    }

    /**
     * Starts counting from zero.
     * @param server the server
     */
    public static void reset(RedisTestServer server) {
        server.resetStats();
    }

    /**
     * The calls per command since the last {@link #reset}, without the harness's own
     * commands.
     * @param server the server
     * @return command name (lower case, {@code a|b} for subcommands) to calls
     */
    public static Map<String, Long> read(RedisTestServer server) {
        return parse(server.info("commandstats"));
    }

    /**
     * @param info the text of {@code INFO commandstats}
     * @return command name to calls, without the harness's own commands
     */
    static Map<String, Long> parse(String info) {
        Map<String, Long> calls = new TreeMap<>();
        for (String line : info.split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            int colon = line.indexOf(':');
            String name = line.substring("cmdstat_".length(), colon).toLowerCase(Locale.ROOT);
            if (OWN_COMMANDS.contains(name)) {
                continue;
            }
            for (String part : line.substring(colon + 1).split(",")) {
                if (part.startsWith("calls=")) {
                    calls.put(name, Long.parseLong(part.substring("calls=".length())));
                }
            }
        }
        return calls;
    }

    /**
     * The server process's CPU time so far, user plus system ({@code INFO cpu}).
     * @param server the server
     * @return seconds
     */
    public static double cpuSeconds(RedisTestServer server) {
        String cpu = server.info("cpu");
        return field(cpu, "used_cpu_user") + field(cpu, "used_cpu_sys");
    }

    /**
     * Socket reads the server has processed so far
     * ({@code INFO stats total_reads_processed}): one per read event, however many
     * commands it brought.
     * @param server the server
     * @return the count since start (not reset by {@code CONFIG RESETSTAT} in every
     * version: take deltas)
     */
    public static long readsProcessed(RedisTestServer server) {
        return (long) field(server.info("stats"), "total_reads_processed");
    }

    /**
     * Client connections open now ({@code INFO clients connected_clients}), without the
     * short-lived one that asks.
     * @param server the server
     * @return connections of everyone else
     */
    public static int clientConnections(RedisTestServer server) {
        return (int) field(server.info("clients"), "connected_clients") - 1;
    }

    private static double field(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new IllegalStateException("INFO has no " + name + ": " + info);
    }

    /**
     * @param calls per command
     * @return the sum
     */
    public static long total(Map<String, Long> calls) {
        return calls.values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * @param calls per command
     * @param divisor cycles or seconds
     * @return per command, divided
     */
    public static Map<String, Double> per(Map<String, Long> calls, double divisor) {
        Map<String, Double> rates = new TreeMap<>();
        calls.forEach((name, count) -> rates.put(name, count / divisor));
        return rates;
    }

}
