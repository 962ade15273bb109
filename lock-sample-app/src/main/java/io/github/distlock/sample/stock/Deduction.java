package io.github.distlock.sample.stock;

/**
 * The outcome of one attempt to sell a unit.
 *
 * @param sku the stock-keeping unit
 * @param deducted whether a unit was sold; {@code false} means the stock was already zero
 * @param remaining the stock this request wrote (or read, if nothing was sold)
 */
public record Deduction(String sku, boolean deducted, long remaining) {
}
