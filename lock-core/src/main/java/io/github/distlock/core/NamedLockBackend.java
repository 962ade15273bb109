package io.github.distlock.core;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A lock backend under the name that locks choose it by ({@code backend = "etcd"},
 * {@code LockRequest.withBackend("etcd")}). A module that brings a store declares one as
 * a bean, and the auto-configuration gives it a lock service of its own (watchdog,
 * waiters) behind the one {@code LockService}:
 *
 * <pre>{@code
 * &#64;Bean
 * NamedLockBackend etcdLockBackend(EtcdLockBackend etcd) {
 *     return new NamedLockBackend("etcd", etcd);
 * }
 * }</pre>
 *
 * A module's auto-configuration that declares one runs before
 * {@code DistributedLockAutoConfiguration}, so that the lock service sees it. An
 * application without a {@code LockBackend} bean (no Redis) gets a lock service over its
 * named backends alone, the default being {@code distributed-lock.backend} or the only
 * one. The backend itself must not be a {@code LockBackend} bean too: that bean would
 * take the place of Redis as the primary backend.
 *
 * @param name lower-case letters, digits and dashes, starting with a letter:
 * {@code redis}, {@code redlock}, {@code etcd}, {@code zookeeper}, or one of the
 * application's own
 * @param backend the store
 */
public record NamedLockBackend(String name, LockBackend backend) implements AutoCloseable {

    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9-]*");

    /**
     * @throws IllegalArgumentException if the name is not lower-case letters, digits and
     * dashes starting with a letter
     */
    public NamedLockBackend {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(backend, "backend");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("A lock backend's name must be lower-case letters, digits and dashes, "
                    + "starting with a letter, such as \"etcd\" or \"orders-redis\"; was \"" + name + "\".");
        }
    }

    /**
     * Closes the backend if it can be closed: declared as a {@code @Bean}, the store then
     * closes with the context, as it would as a {@code LockBackend} bean of its own.
     */
    @Override
    public void close() throws Exception {
        if (backend instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }

}
