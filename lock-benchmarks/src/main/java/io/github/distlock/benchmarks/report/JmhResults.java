package io.github.distlock.benchmarks.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;

import io.github.distlock.benchmarks.harness.Json;

/**
 * Scenario 1 as read from JMH's JSON output, reduced to one number per implementation,
 * thread count and metric: the median over forks of each fork's value (a fork's mean
 * throughput over its iterations; a fork's percentile over all its samples).
 */
final class JmhResults {

    /** Per implementation and thread count. */
    final Map<String, Map<Integer, Cell>> cells = new LinkedHashMap<>();

    String jmhVersion = "?";

    String jvmArgs = "";

    /** Forks per benchmark: JMH's {@code forks}, or the rounds of an interleaved run. */
    int forks;

    /**
     * The forks ran in rounds across implementations ({@code JmhMain}), not back to back.
     */
    boolean interleaved;

    int warmupIterations;

    String warmupTime = "";

    int measurementIterations;

    String measurementTime = "";

    /** What one implementation did at one thread count. */
    static final class Cell {

        double throughput = Double.NaN;

        double throughputError = Double.NaN;

        double p50Micros = Double.NaN;

        double p99Micros = Double.NaN;

        int forks;

    }

    static JmhResults read(Path file) {
        JmhResults results = new JmhResults();
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(Files.readString(file));
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot read JMH results " + file, ex);
        }
        for (JsonNode entry : root) {
            results.jmhVersion = entry.path("jmhVersion").asText("?");
            results.jvmArgs = String.join(" ", toStrings(entry.path("jvmArgs")));
            results.forks = Math.max(results.forks, entry.path("forks").asInt());
            results.warmupIterations = entry.path("warmupIterations").asInt();
            results.warmupTime = entry.path("warmupTime").asText();
            results.measurementIterations = entry.path("measurementIterations").asInt();
            results.measurementTime = entry.path("measurementTime").asText();
            String implementation = entry.path("params").path("implementation").asText();
            int threads = entry.path("threads").asInt();
            Cell cell = results.cells.computeIfAbsent(implementation, key -> new TreeMap<>())
                .computeIfAbsent(threads, key -> new Cell());
            JsonNode metric = entry.path("primaryMetric");
            String mode = entry.path("mode").asText();
            if (mode.equals("thrpt")) {
                List<Double> perFork = new ArrayList<>();
                for (JsonNode fork : metric.path("rawData")) {
                    double sum = 0;
                    int count = 0;
                    for (JsonNode iteration : fork) {
                        sum += iteration.asDouble();
                        count++;
                    }
                    if (count > 0) {
                        perFork.add(sum / count);
                    }
                }
                cell.throughput = perFork.isEmpty() ? metric.path("score").asDouble() : Stats.median(perFork);
                cell.throughputError = metric.path("scoreError").asDouble(Double.NaN);
                cell.forks = perFork.size();
                // An interleaved run writes one entry per benchmark with forks = 1 and a
                // rawData row per round.
                if (perFork.size() > entry.path("forks").asInt()) {
                    results.interleaved = true;
                }
                results.forks = Math.max(results.forks, perFork.size());
            }
            else if (mode.equals("sample")) {
                double toMicros = unitToMicros(metric.path("scoreUnit").asText("us/op"));
                List<Double> p50 = new ArrayList<>();
                List<Double> p99 = new ArrayList<>();
                for (JsonNode fork : metric.path("rawDataHistogram")) {
                    TreeMap<Double, Long> merged = new TreeMap<>();
                    for (JsonNode iteration : fork) {
                        for (JsonNode pair : iteration) {
                            merged.merge(pair.get(0).asDouble(), pair.get(1).asLong(), Long::sum);
                        }
                    }
                    if (!merged.isEmpty()) {
                        p50.add(percentile(merged, 50) * toMicros);
                        p99.add(percentile(merged, 99) * toMicros);
                    }
                }
                if (p50.isEmpty()) {
                    // Older JMH or a stripped file: fall back to the percentiles over all
                    // forks together.
                    cell.p50Micros = metric.path("scorePercentiles").path("50.0").asDouble() * toMicros;
                    cell.p99Micros = metric.path("scorePercentiles").path("99.0").asDouble() * toMicros;
                }
                else {
                    cell.p50Micros = Stats.median(p50);
                    cell.p99Micros = Stats.median(p99);
                }
            }
        }
        return results;
    }

    Cell cell(String implementation, int threads) {
        return cells.getOrDefault(implementation, Map.of()).get(threads);
    }

    private static double percentile(TreeMap<Double, Long> histogram, double percentile) {
        long total = histogram.values().stream().mapToLong(Long::longValue).sum();
        long rank = (long) Math.ceil(total * percentile / 100.0);
        long seen = 0;
        for (Map.Entry<Double, Long> bucket : histogram.entrySet()) {
            seen += bucket.getValue();
            if (seen >= rank) {
                return bucket.getKey();
            }
        }
        return histogram.lastKey();
    }

    private static double unitToMicros(String unit) {
        if (unit.startsWith("ns")) {
            return 1e-3;
        }
        if (unit.startsWith("ms")) {
            return 1e3;
        }
        if (unit.startsWith("s/")) {
            return 1e6;
        }
        return 1;
    }

    private static List<String> toStrings(JsonNode array) {
        List<String> strings = new ArrayList<>();
        for (Iterator<JsonNode> it = array.elements(); it.hasNext();) {
            strings.add(it.next().asText());
        }
        return strings;
    }

}
