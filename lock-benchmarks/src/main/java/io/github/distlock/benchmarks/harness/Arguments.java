package io.github.distlock.benchmarks.harness;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code --name=value} command-line arguments of the benchmark mains, with typed getters
 * and defaults. Small on purpose: the mains are driven by the Maven profile and by the
 * smoke test, never by hand-typed option soup.
 */
public final class Arguments {

    private final Map<String, String> values = new LinkedHashMap<>();

    private Arguments() {
    }

    /**
     * @param args e.g. {@code ["--forks=3", "--output=target/bench/jmh.json"]}
     * @return the parsed arguments
     * @throws IllegalArgumentException for an argument not of the form
     * {@code --name=value}
     */
    public static Arguments parse(String... args) {
        Arguments parsed = new Arguments();
        for (String arg : args) {
            int equals = arg.indexOf('=');
            if (!arg.startsWith("--") || equals < 3) {
                throw new IllegalArgumentException("expected --name=value, got '" + arg + "'");
            }
            parsed.values.put(arg.substring(2, equals), arg.substring(equals + 1));
        }
        return parsed;
    }

    /**
     * @param name the option name without dashes
     * @param fallback the value when absent
     * @return the value
     */
    public String string(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    /**
     * @param name the option name
     * @param fallback the value when absent
     * @return the value as an int
     */
    public int integer(String name, int fallback) {
        String value = values.get(name);
        return value == null ? fallback : Integer.parseInt(value.trim());
    }

    /**
     * A duration written as {@code 500ms}, {@code 15s}, {@code 2m} or ISO-8601
     * ({@code PT15S}).
     * @param name the option name
     * @param fallback the value when absent
     * @return the value
     */
    public Duration duration(String name, Duration fallback) {
        String value = values.get(name);
        return value == null ? fallback : parseDuration(value);
    }

    /**
     * @param text {@code 500ms}, {@code 15s}, {@code 2m} or ISO-8601
     * @return the duration
     */
    public static Duration parseDuration(String text) {
        String value = text.trim().toLowerCase(java.util.Locale.ROOT);
        if (value.startsWith("pt")) {
            return Duration.parse(value.toUpperCase(java.util.Locale.ROOT));
        }
        if (value.endsWith("ms")) {
            return Duration.ofMillis(Long.parseLong(value.substring(0, value.length() - 2)));
        }
        if (value.endsWith("s")) {
            return Duration.ofMillis(Math.round(Double.parseDouble(value.substring(0, value.length() - 1)) * 1000));
        }
        if (value.endsWith("m")) {
            return Duration.ofSeconds(Long.parseLong(value.substring(0, value.length() - 1)) * 60);
        }
        throw new IllegalArgumentException("not a duration: '" + text + "' (use 500ms, 15s, 2m or PT15S)");
    }

}
