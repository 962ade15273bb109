package io.github.distlock;

import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * A lock named a backend that is not configured ({@code backend = "etcd"} with no etcd
 * endpoints, say). Thrown by the call for {@link LockService}; for
 * {@code @DistributedLock} the startup fails with the same message.
 *
 * <pre>{@code
 * try {
 *     lockService.lock(LockRequest.of("ledger:42").withBackend("etcd"));
 * }
 * catch (UnknownLockBackendException ex) {
 *     // ex.getConfiguredBackends(): [redis]
 * }
 * }</pre>
 */
public class UnknownLockBackendException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /** What configures each built-in backend. */
    private static final List<String[]> BUILT_IN = List.of(
            new String[] { "redis", "spring.data.redis.* (and leave distributed-lock.redlock.nodes unset)" },
            new String[] { "redlock", "distributed-lock.redlock.nodes" },
            new String[] { "etcd", "distributed-lock.etcd.endpoints (with lock-etcd on the class path)" },
            new String[] { "zookeeper",
                    "distributed-lock.zookeeper.connect-string (with lock-zookeeper on the class path)" });

    private final String backend;

    private final Set<String> configuredBackends;

    /**
     * @param backend the name that is not configured
     * @param configuredBackends the names that are
     * @param what what named it, for the message: {@code "Lock 'order:42'"} or a method
     */
    public UnknownLockBackendException(String backend, Set<String> configuredBackends, String what) {
        super(what + " names the lock backend \"" + backend + "\", which is not configured; the configured ones are "
                + configuredBackends + ". " + fix(backend, configuredBackends));
        this.backend = backend;
        this.configuredBackends = Set.copyOf(configuredBackends);
    }

    private static String fix(String backend, Set<String> configured) {
        String property = propertyFor(backend);
        if (property != null) {
            return "To add it, set " + property + "; or name one of the configured backends.";
        }
        return "Name one of the configured backends, or declare a NamedLockBackend bean named \"" + backend + "\".";
    }

    /** What configures the built-in backend {@code backend}, or {@code null}. */
    static @Nullable String propertyFor(String backend) {
        for (String[] builtIn : BUILT_IN) {
            if (builtIn[0].equals(backend)) {
                return builtIn[1];
            }
        }
        return null;
    }

    /** The name that is not configured. */
    public String getBackend() {
        return backend;
    }

    /** The names that are. */
    public Set<String> getConfiguredBackends() {
        return configuredBackends;
    }

}
