/**
 * The etcd store ({@link io.github.distlock.etcd.EtcdLockBackend}): one key per
 * acquisition on a lease of its own, the lowest create revision holds the lock and is its
 * fencing token, waiters wake on a watch. Connected with
 * {@link io.github.distlock.etcd.EtcdSettings}; the key layout is
 * {@link io.github.distlock.etcd.EtcdKeyLayout}.
 *
 * <p>
 * Non-null unless marked {@code @Nullable}.
 */
@NullMarked
package io.github.distlock.etcd;

import org.jspecify.annotations.NullMarked;
