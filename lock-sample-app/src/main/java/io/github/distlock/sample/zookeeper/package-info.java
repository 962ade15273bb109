/**
 * An embedded ZooKeeper, so that the sample's ledger locks run on a machine without one.
 */
package io.github.distlock.sample.zookeeper;
