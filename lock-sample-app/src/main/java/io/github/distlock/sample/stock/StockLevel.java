package io.github.distlock.sample.stock;

/**
 * What Redis currently says about one SKU.
 *
 * @param sku the stock-keeping unit
 * @param stock units left according to the stock counter
 * @param sold units sold since the last reset (an atomic counter, so it is exact even
 * when the stock counter lost updates)
 */
public record StockLevel(String sku, long stock, long sold) {
}
