/**
 * A real ZooKeeper ensemble for tests
 * ({@link io.github.distlock.testsupport.zookeeper.ZooKeeperTestEnsemble}): three
 * {@code QuorumPeerMain} processes run from the ZooKeeper jars on the classpath, with
 * kill, pause, resume and restart of a member and leader lookup. ZooKeeper is never
 * mocked; modules depend on this one in {@code test} scope only, so the server jars stay
 * off every other classpath.
 *
 * <p>
 * Non-null unless marked {@code @Nullable}.
 */
@NullMarked
package io.github.distlock.testsupport.zookeeper;

import org.jspecify.annotations.NullMarked;
