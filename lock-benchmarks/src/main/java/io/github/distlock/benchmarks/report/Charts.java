package io.github.distlock.benchmarks.report;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler.LegendPosition;

/** Bar charts of scenario 1, drawn from the JMH results with XChart and saved as PNG. */
final class Charts {

    private Charts() {
    }

    /**
     * One bar group per implementation, one bar per series.
     * @param file the PNG to write
     * @param title the chart title
     * @param yAxis the y axis title
     * @param labels implementation labels
     * @param seriesNames one per series
     * @param series values per series, aligned with {@code labels}; NaN draws as 0
     * @param logarithmic a log y axis, so that p50 stays readable next to a long p99;
     * ignored unless every value is positive
     */
    static void bars(Path file, String title, String yAxis, List<String> labels, List<String> seriesNames,
            List<List<Double>> series, boolean logarithmic) {
        CategoryChart chart = new CategoryChartBuilder().width(1100).height(560).title(title).yAxisTitle(yAxis).build();
        chart.getStyler().setLegendPosition(LegendPosition.OutsideS);
        chart.getStyler().setLegendLayout(org.knowm.xchart.style.Styler.LegendLayout.Horizontal);
        chart.getStyler().setYAxisDecimalPattern("#,###.##");
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        boolean allPositive = series.stream().flatMap(List::stream).allMatch(v -> v != null && v > 0);
        if (logarithmic && allPositive) {
            chart.getStyler().setYAxisLogarithmic(true);
            // Bars start at zero unless told otherwise, and a log axis cannot hold zero.
            chart.getStyler()
                .setYAxisMin(Math.pow(10, Math.floor(Math
                    .log10(series.stream().flatMap(List::stream).mapToDouble(Double::doubleValue).min().orElse(1)))));
        }
        for (int i = 0; i < seriesNames.size(); i++) {
            List<Double> values = series.get(i).stream().map(v -> v == null || v.isNaN() ? 0.0 : v).toList();
            chart.addSeries(seriesNames.get(i), labels, values);
        }
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            try (OutputStream out = Files.newOutputStream(file)) {
                BitmapEncoder.saveBitmap(chart, out, BitmapFormat.PNG);
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot write chart " + file, ex);
        }
    }

}
