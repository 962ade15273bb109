package io.github.distlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;

import org.jspecify.annotations.Nullable;

import io.github.distlock.LockHandle;
import io.github.distlock.LockKeys;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.MultiLockHandle;
import io.github.distlock.UnknownLockBackendException;

/**
 * One {@link LockService} over several named backends: each request goes to the lock
 * service of the backend it names ({@link LockRequest#withBackend}), or of the default
 * one. Each backend keeps its own watchdog, waiters and wake-ups; they share nothing but
 * this entry point, so a lock on one backend never excludes the same key on another.
 *
 * <pre>{@code
 * LockService locks = new RoutingLockService(Map.of("redis", redisLocks, "etcd", etcdLocks), "redis");
 * locks.lock(LockRequest.of("cart:7"));                          // redis
 * locks.lock(LockRequest.of("ledger:42").withBackend("etcd"));   // etcd
 * }</pre>
 *
 * A name that is not configured fails with {@link UnknownLockBackendException}; a
 * multi-key lock keeps all its keys on one backend, and one that would mix them fails
 * before anything is taken.
 */
public final class RoutingLockService implements LockService, AutoCloseable {

    private final Map<String, LockService> services;

    private final String defaultBackend;

    private final LockService defaultService;

    /** Closed with this service: the named backends' lock services and watchdogs. */
    private final List<AutoCloseable> resources;

    /**
     * @param services each backend's lock service, by name, in the order to list them
     * @param defaultBackend the name of the one a request without a name gets
     * @throws IllegalArgumentException if {@code defaultBackend} is not among them
     */
    public RoutingLockService(Map<String, ? extends LockService> services, String defaultBackend) {
        this(services, defaultBackend, List.of());
    }

    /**
     * @param services each backend's lock service, by name, in the order to list them
     * @param defaultBackend the name of the one a request without a name gets
     * @param resources closed, in this order, when this service closes (the lock services
     * and watchdogs it was built with)
     * @throws IllegalArgumentException if {@code defaultBackend} is not among them
     */
    public RoutingLockService(Map<String, ? extends LockService> services, String defaultBackend,
            List<? extends AutoCloseable> resources) {
        this.resources = List.copyOf(resources);
        this.services = new LinkedHashMap<>(services);
        if (this.services.isEmpty()) {
            throw new IllegalArgumentException("A routing lock service needs at least one backend.");
        }
        this.defaultBackend = Objects.requireNonNull(defaultBackend, "defaultBackend");
        LockService fallback = this.services.get(defaultBackend);
        if (fallback == null) {
            throw new UnknownLockBackendException(defaultBackend, this.services.keySet(), "distributed-lock.backend");
        }
        this.defaultService = fallback;
    }

    /** The configured backends' names. */
    public Set<String> backendNames() {
        return Set.copyOf(services.keySet());
    }

    /** The name of the backend that requests naming none get. */
    public String defaultBackend() {
        return defaultBackend;
    }

    /**
     * The lock service of backend {@code backend}, or of the default one for
     * {@code null}.
     * @throws UnknownLockBackendException if no backend has that name
     */
    public LockService service(@Nullable String backend) {
        return service(backend, "A lock");
    }

    private LockService service(@Nullable String backend, String what) {
        if (backend == null) {
            return defaultService;
        }
        LockService service = services.get(backend);
        if (service == null) {
            throw new UnknownLockBackendException(backend, services.keySet(), what);
        }
        return service;
    }

    private LockService route(LockRequest request) {
        Objects.requireNonNull(request, "request");
        return service(request.backend(), "Lock " + LockKeys.printable(String.valueOf(request.key())));
    }

    @Override
    public Optional<LockHandle> tryLock(LockRequest request) {
        return route(request).tryLock(request);
    }

    @Override
    public LockHandle lock(LockRequest request) {
        return route(request).lock(request);
    }

    @Override
    public <T extends @Nullable Object> T callLocked(LockRequest request, Callable<T> action) throws Exception {
        return route(request).callLocked(request, action);
    }

    /** On the one backend all the requests name; mixing backends fails first. */
    @Override
    public MultiLockHandle lockAll(List<LockRequest> requests) {
        return oneBackend(requests).lockAll(requests);
    }

    /** On the one backend all the requests name; mixing backends fails first. */
    @Override
    public Optional<MultiLockHandle> tryLockAll(List<LockRequest> requests) {
        return oneBackend(requests).tryLockAll(requests);
    }

    /**
     * The lock service every request goes to: a multi-key lock is taken on one store, in
     * one key order, or it could not be all or nothing.
     */
    private LockService oneBackend(List<LockRequest> requests) {
        Map<String, List<String>> keysByBackend = new LinkedHashMap<>();
        for (LockRequest request : requests) {
            String backend = (request.backend() != null ? request.backend() : defaultBackend);
            service(backend, "Lock " + LockKeys.printable(String.valueOf(request.key())));
            keysByBackend.computeIfAbsent(backend, name -> new ArrayList<>()).add(request.key());
        }
        if (keysByBackend.size() > 1) {
            throw new IllegalArgumentException(
                    "A multi-key lock keeps all its keys on one backend, but these keys name " + "several: "
                            + keysByBackend + ". Name the same backend for every key (withBackend, or the "
                            + "annotation's backend), or take the locks of each backend separately.");
        }
        return (keysByBackend.isEmpty() ? defaultService : services.get(keysByBackend.keySet().iterator().next()));
    }

    /** The default backend's limit. */
    @Override
    public int maxKeyLength() {
        return defaultService.maxKeyLength();
    }

    /** The default backend's. */
    @Override
    public Duration defaultWaitTime() {
        return defaultService.defaultWaitTime();
    }

    /** Whether the default backend keeps a minimum hold. */
    @Override
    public boolean supportsMinHold() {
        return defaultService.supportsMinHold();
    }

    /** Closes the resources it was given; their leases then expire on their own. */
    @Override
    public void close() {
        for (AutoCloseable resource : resources) {
            try {
                resource.close();
            }
            catch (Exception ex) {
                // Closing the rest matters more than one failure to close.
            }
        }
    }

    /**
     * Whether backend {@code backend} ({@code null}: the default) keeps a minimum hold.
     * @throws UnknownLockBackendException if no backend has that name
     */
    public boolean supportsMinHold(@Nullable String backend) {
        return service(backend).supportsMinHold();
    }

}
