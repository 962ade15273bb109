/**
 * The ZooKeeper lock store, on Apache Curator
 * ({@link io.github.distlock.zookeeper.ZooKeeperLockBackend}): one ephemeral sequential
 * node per acquisition under {@code /distributed-lock/<name>}, the lowest holding the
 * lock and each waiter watching the node before its own; the holder node's {@code czxid}
 * is the fencing token. How it connects:
 * {@link io.github.distlock.zookeeper.ZooKeeperLockSettings}.
 *
 * <p>
 * Non-null unless marked {@code @Nullable}.
 */
@NullMarked
package io.github.distlock.zookeeper;

import org.jspecify.annotations.NullMarked;
