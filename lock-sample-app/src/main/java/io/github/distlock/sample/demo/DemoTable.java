package io.github.distlock.sample.demo;

import java.util.ArrayList;
import java.util.List;

/**
 * A small Markdown table whose columns are padded to their widest cell, so that it reads
 * as well in a terminal as it renders on GitHub. Numbers are right-aligned, text
 * left-aligned.
 *
 * <pre>{@code
 * DemoTable table = new DemoTable().left("mode").right("sold");
 * table.row("guarded", 100);
 * System.out.print(table);
 * }</pre>
 */
public final class DemoTable {

    private final List<String> headers = new ArrayList<>();

    private final List<Boolean> rightAligned = new ArrayList<>();

    private final List<List<String>> rows = new ArrayList<>();

    /** Adds a left-aligned column (text). */
    public DemoTable left(String header) {
        headers.add(header);
        rightAligned.add(false);
        return this;
    }

    /** Adds a right-aligned column (numbers, durations). */
    public DemoTable right(String header) {
        headers.add(header);
        rightAligned.add(true);
        return this;
    }

    /**
     * Adds a row; one cell per column, in column order, printed with
     * {@code String.valueOf}.
     */
    public DemoTable row(Object... cells) {
        if (cells.length != headers.size()) {
            throw new IllegalArgumentException("A row needs " + headers.size() + " cells, got " + cells.length);
        }
        List<String> row = new ArrayList<>();
        for (Object cell : cells) {
            row.add(String.valueOf(cell));
        }
        rows.add(row);
        return this;
    }

    /**
     * The cells of row {@code index} (0 is the first row under the header), for tests.
     */
    public List<String> cells(int index) {
        return List.copyOf(rows.get(index));
    }

    @Override
    public String toString() {
        int[] widths = new int[headers.size()];
        for (int column = 0; column < widths.length; column++) {
            // At least 3 wide: a Markdown separator needs "---" (or "--:").
            widths[column] = Math.max(3, headers.get(column).length());
            for (List<String> row : rows) {
                widths[column] = Math.max(widths[column], row.get(column).length());
            }
        }
        StringBuilder table = new StringBuilder();
        line(table, headers, widths);
        table.append('|');
        for (int column = 0; column < widths.length; column++) {
            // A cell is padded by one space on each side; the separator spans the same
            // width.
            table.append(
                    rightAligned.get(column) ? "-".repeat(widths[column] + 1) + ":" : "-".repeat(widths[column] + 2))
                .append('|');
        }
        table.append(System.lineSeparator());
        for (List<String> row : rows) {
            line(table, row, widths);
        }
        return table.toString();
    }

    private void line(StringBuilder table, List<String> cells, int[] widths) {
        table.append('|');
        for (int column = 0; column < widths.length; column++) {
            String format = rightAligned.get(column) ? "%" + widths[column] + "s" : "%-" + widths[column] + "s";
            table.append(' ').append(String.format(format, cells.get(column))).append(" |");
        }
        table.append(System.lineSeparator());
    }

}
