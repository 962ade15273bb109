package io.github.distlock.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Replaces one generated part of an existing page (a block between two marker lines, and
 * its rows of the targets table) and keeps every other line: what a partial run
 * ({@code -Dbench.only=redlock}, {@code micrometer}) does to the page the full suite
 * wrote.
 */
final class PageParts {

    private PageParts() {
    }

    /**
     * @param page the page's text
     * @param part the part's name, for error messages
     * @param beginPrefix how the block's first line starts
     * @param end the block's last line
     * @param insertBefore where a page without the block gets it: before the first line
     * starting with this, else before {@code ## Problems}, else at the end
     * @param block the new block, its marker lines included
     * @param targetPrefix how the part's rows of the targets table start; new rows go at
     * the table's end
     * @param targetRows the new rows
     * @return the new page
     * @throws IllegalStateException if the page has no targets table or a broken block
     *
     * <pre>{@code
     * PageParts.splice(page, "Redlock", "<!-- redlock:begin", "<!-- redlock:end -->", "## Problems", section,
     *         "| Redlock, 5 nodes: ", rows);
     * }</pre>
     */
    static String splice(String page, String part, String beginPrefix, String end, String insertBefore,
            List<String> block, String targetPrefix, List<String> targetRows) {
        List<String> lines = new ArrayList<>(List.of(page.split("\n", -1)));
        int begin = indexOf(lines, line -> line.startsWith(beginPrefix), 0);
        int last = indexOf(lines, line -> line.equals(end), 0);
        if ((begin < 0) != (last < 0) || (begin >= 0 && last < begin)) {
            throw new IllegalStateException(
                    "the page has a broken " + part + " section (" + beginPrefix + " at line " + (begin + 1) + ", "
                            + end + " at line " + (last + 1) + "); regenerate the whole " + "page with the full suite");
        }
        if (begin >= 0) {
            lines.subList(begin, last + 1).clear();
            lines.addAll(begin, block);
        }
        else {
            int at = indexOf(lines, line -> line.startsWith(insertBefore), 0);
            if (at < 0) {
                at = indexOf(lines, line -> line.equals("## Problems"), 0);
            }
            List<String> withBlank = new ArrayList<>(block);
            withBlank.add("");
            lines.addAll(at < 0 ? lines.size() : at, withBlank);
        }
        lines.removeIf(line -> line.startsWith(targetPrefix));
        int heading = indexOf(lines, line -> line.equals("## Targets"), 0);
        int separator = heading < 0 ? -1 : indexOf(lines, line -> line.startsWith("|---"), heading);
        if (separator < 0) {
            throw new IllegalStateException("the page has no targets table under '## Targets' to add the " + part
                    + " rows to; regenerate the whole page with the full suite");
        }
        int tableEnd = separator;
        while (tableEnd + 1 < lines.size() && lines.get(tableEnd + 1).startsWith("|")) {
            tableEnd++;
        }
        lines.addAll(tableEnd + 1, targetRows);
        return String.join("\n", lines);
    }

    private static int indexOf(List<String> lines, Predicate<String> matches, int from) {
        for (int i = from; i < lines.size(); i++) {
            if (matches.test(lines.get(i))) {
                return i;
            }
        }
        return -1;
    }

}
