package io.github.distlock.sample.demo;

import java.util.List;

/**
 * The result of an {@link OversellDemo}: one row per mode, printable as a Markdown table.
 *
 * @param settings the size of the runs
 * @param instances how many application instances shared the Redis
 * @param rows unguarded first, then guarded
 */
public record DemoReport(DemoSettings settings, int instances, List<DemoRow> rows) {

    /** The row of {@code mode}. */
    public DemoRow row(String mode) {
        return rows.stream()
            .filter(row -> row.mode().equals(mode))
            .findFirst()
            .orElseThrow(() -> new IllegalArgumentException("No row for mode " + mode));
    }

    /** The rows as a Markdown table, followed by the definition of "oversold". */
    public String toTable() {
        String format = "| %-9s | %8s | %4s | %8s | %12s | %11s | %8s | %7s |%n";
        StringBuilder table = new StringBuilder();
        table.append(String.format(format, "mode", "requests", "sold", "sold out", "lock timeout", "final stock",
                "oversold", "time"));
        table.append("|-----------|---------:|-----:|---------:|-------------:|------------:|---------:|--------:|")
            .append(System.lineSeparator());
        for (DemoRow row : rows) {
            table.append(String.format(format, row.mode(), row.requests(), row.sold(), row.soldOut(), row.rejected(),
                    row.finalStock(), row.oversold(), row.elapsed().toMillis() + " ms"));
        }
        table.append(System.lineSeparator())
            .append("oversold = sold + final stock - initial stock (")
            .append(settings.initialStock())
            .append("): units sold that the stock never had, one per lost update of the stock counter.")
            .append(System.lineSeparator());
        return table.toString();
    }
}
