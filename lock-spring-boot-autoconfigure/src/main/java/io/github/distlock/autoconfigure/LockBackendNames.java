package io.github.distlock.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.distlock.LockService;
import io.github.distlock.core.DefaultLockService;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.core.HandOverNotifications;
import io.github.distlock.core.LeaseWatchdog;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockListener;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.core.NamedLockBackend;
import io.github.distlock.core.RoutingLockService;

/**
 * The names locks choose their backend by, and the one lock service over several: the
 * {@link LockBackend} bean under its built-in name ({@code redis}, {@code redlock}), and
 * each {@link NamedLockBackend} bean under its own, each with a watchdog and waiters of
 * its own.
 */
final class LockBackendNames {

    private LockBackendNames() {
    }

    /**
     * The name of the {@link LockBackend} bean: {@code redlock} for a Redlock,
     * {@code redis} for a single Redis (either driver), {@code etcd} and
     * {@code zookeeper} for those modules' backends, {@code in-memory} for the in-memory
     * backend, {@code default} for an application's own. By class name, so that it loads
     * without lock-redis.
     */
    static String of(LockBackend backend) {
        String type = backend.getClass().getName();
        if (type.startsWith("io.github.distlock.redlock.")) {
            return "redlock";
        }
        if (type.startsWith("io.github.distlock.redis.")) {
            return "redis";
        }
        if (type.startsWith("io.github.distlock.etcd.")) {
            return "etcd";
        }
        if (type.startsWith("io.github.distlock.zookeeper.")) {
            return "zookeeper";
        }
        if (type.equals("io.github.distlock.memory.InMemoryLockBackend")) {
            return "in-memory";
        }
        return DefaultLockService.DEFAULT_BACKEND;
    }

    /**
     * One lock service over named backends only (no {@link LockBackend} bean), requests
     * without a name going to {@code distributed-lock.backend}, or to the only one.
     * @throws IllegalStateException if there are several and none is named the default
     */
    static RoutingLockService routeNamedOnly(List<NamedLockBackend> named, DistributedLockProperties properties,
            LockListener listener) {
        String defaultName = properties.getBackend();
        if (defaultName.isEmpty()) {
            if (named.size() > 1) {
                throw new IllegalStateException("There are " + named.size() + " lock backends, "
                        + named.stream().map(NamedLockBackend::name).toList() + ", and none is the default: set "
                        + DistributedLockProperties.PREFIX + ".backend to the one that locks naming no backend use.");
            }
            defaultName = named.get(0).name();
        }
        Map<String, LockService> services = new LinkedHashMap<>();
        List<AutoCloseable> resources = new ArrayList<>();
        addNamed(services, resources, named, properties, listener);
        return new RoutingLockService(services, defaultName, resources);
    }

    /**
     * One lock service over the primary backend and the named ones, requests without a
     * name going to {@code defaultName}.
     * @throws IllegalStateException if two backends have one name
     * @throws io.github.distlock.UnknownLockBackendException if {@code defaultName}
     * ({@code distributed-lock.backend}) names none of them
     */
    static RoutingLockService route(String primaryName, DefaultLockService primary, List<NamedLockBackend> named,
            String defaultName, DistributedLockProperties properties, LockListener listener) {
        Map<String, LockService> services = new LinkedHashMap<>();
        services.put(primaryName, primary);
        List<AutoCloseable> resources = new ArrayList<>();
        addNamed(services, resources, named, properties, listener);
        return new RoutingLockService(services, defaultName, resources);
    }

    /**
     * A lock service, watchdog and waiters for each named backend, added to
     * {@code services}; what is to be closed with them to {@code resources}.
     */
    private static void addNamed(Map<String, LockService> services, List<AutoCloseable> resources,
            List<NamedLockBackend> named, DistributedLockProperties properties, LockListener listener) {
        for (NamedLockBackend backend : named) {
            if (services.containsKey(backend.name())) {
                throw new IllegalStateException("Two lock backends are named \"" + backend.name() + "\" ("
                        + backend.backend().getClass().getName() + " and the one before it); give each "
                        + "NamedLockBackend bean a name of its own (the built-in ones are redis, redlock, etcd and "
                        + "zookeeper).");
            }
            LeaseWatchdog watchdog = new LeaseWatchdog(backend.backend(), properties.getWatchdog().getRenewalRatio());
            LockWaiters waiters = new LockWaiters();
            if (backend.backend() instanceof HandOverNotifications notifications) {
                waiters.notificationsFrom(notifications);
                notifications.deliverHandOversTo(waiters);
            }
            // Redlock's retry delay belongs to Redlock: any other store's waiters back
            // off
            // on their own.
            LockDefaults defaults = new LockDefaults(properties.getDefaultTtl(), properties.getDefaultWaitTime(),
                    properties.getWatchdog().isEnabled(), null, properties.getMaxKeyLength());
            DefaultLockService service = new DefaultLockService(backend.name(), backend.backend(), watchdog, defaults,
                    waiters, listener);
            services.put(backend.name(), service);
            resources.add(service);
            resources.add(watchdog);
        }
    }

}
