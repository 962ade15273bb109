package io.github.distlock.benchmarks.report;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * Medians, the report's one statistic: robust to a single disturbed fork on a shared
 * machine.
 */
final class Stats {

    private Stats() {
    }

    static double median(Collection<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.removeIf(value -> value == null || value.isNaN());
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        sorted.sort(Double::compare);
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }

    static <T> double median(Collection<T> items, ToDoubleFunction<T> value) {
        List<Double> values = new ArrayList<>();
        for (T item : items) {
            values.add(value.applyAsDouble(item));
        }
        return median(values);
    }

}
