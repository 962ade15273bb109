package io.github.distlock.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.distlock.testsupport.RedisServerExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The hot-item demo's claims: neither one lock nor N segments oversells, and both
 * throughputs are reported.
 */
class HotItemDemoTest {

    @RegisterExtension
    static RedisServerExtension redis = new RedisServerExtension();

    @Test
    void singleSegmentAndSegmentedStockSellExactlyTheStockAndReportTheirThroughput() {
        HotItemDemo.Settings settings = new HotItemDemo.Settings(80, 60, 4, 8);

        HotItemDemo.Report report = HotItemDemo.run(settings, "--spring.data.redis.host=" + redis.host(),
                "--spring.data.redis.port=" + redis.port());

        assertThat(report.single().segments()).isEqualTo(1);
        assertThat(report.segmented().segments()).isEqualTo(4);
        for (HotItemDemo.Row row : new HotItemDemo.Row[] { report.single(), report.segmented() }) {
            assertThat(row.errors()).as("unexpected failures: %s", row.firstError()).isZero();
            assertThat(row.oversold()).as("oversold with %d segment(s)", row.segments()).isZero();
            assertThat(row.sold() + row.finalStock()).isEqualTo(settings.stock());
            assertThat(row.sold() + row.soldOut() + row.rejected()).isEqualTo(settings.requests());
            if (row.rejected() == 0) {
                // Every unit sold, and every request beyond the stock found it sold out,
                // in every segment.
                assertThat(row.sold()).isEqualTo(settings.stock());
                assertThat(row.soldOut()).isEqualTo(settings.requests() - (int) settings.stock());
            }
            assertThat(row.salesPerSecond()).isPositive();
        }

        String table = report.table().toString();
        System.out.println(table);
        assertThat(table).contains("| segments |", "sales/s |")
            .containsPattern("\\|\\s+1 \\|\\s+80 \\|\\s+\\d+ \\|")
            .containsPattern("\\|\\s+4 \\|\\s+80 \\|\\s+\\d+ \\|");
    }

}
