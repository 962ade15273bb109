package io.github.distlock.sample.demo;

import java.time.Duration;

/**
 * The outcome of one demo run (all requests against one deduction method).
 *
 * @param mode {@code unguarded} or {@code guarded}
 * @param requests deductions attempted
 * @param sold units sold, from the atomic sales counter in Redis
 * @param soldOut requests that found the stock at zero and sold nothing
 * @param rejected requests that did not get the lock within the wait time and sold
 * nothing
 * @param errors requests that failed otherwise
 * @param finalStock the stock counter after the run
 * @param oversold {@code sold + finalStock - initialStock}: the units that were sold
 * although the stock never had them. Every lost update of the stock counter adds one.
 * Zero means the books balance.
 * @param elapsed wall time of the run
 * @param firstError the first unexpected failure, or {@code null}
 */
public record DemoRow(String mode, int requests, long sold, int soldOut, int rejected, int errors, long finalStock,
        long oversold, Duration elapsed, Throwable firstError) {
}
