/**
 * A ledger whose payouts are locked on ZooKeeper and fenced, beside the stock's Redis
 * locks: one application, a store per lock.
 */
package io.github.distlock.sample.ledger;
