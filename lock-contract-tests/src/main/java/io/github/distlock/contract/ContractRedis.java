package io.github.distlock.contract;

import java.util.List;
import java.util.Set;

import io.github.distlock.testsupport.RedisFaultProxy;

/**
 * The Redis a backend runs on, as the contract tests need it: how an application connects
 * to it, and a side door that reads and deletes keys behind the application's back (on
 * whichever node owns the key).
 *
 * <p>
 * Implementations for a standalone server, a Cluster and a Sentinel group:
 * {@link StandaloneRedis}, {@link ClusterRedis}, {@link SentinelRedis}.
 */
public interface ContractRedis extends AutoCloseable {

    /**
     * The {@code spring.data.redis.*} properties that connect an application to this
     * Redis, as {@code name=value}.
     */
    List<String> springProperties();

    /**
     * Runs a command on the node that owns {@code key}, bypassing the application under
     * test.
     * @param key the key the command routes by
     * @param command the command and its arguments, e.g. {@code "PTTL", key}
     * @return Redis's reply
     */
    Object command(String key, String... command);

    /** The keys matching a {@code SCAN MATCH} pattern on every master. */
    Set<String> keys(String pattern);

    /**
     * Readies this Redis for the next test: resumes anything paused and deletes every
     * key.
     */
    void reset();

    /**
     * Starts a fault proxy in front of this Redis; only backends with
     * {@link Capability#FAULT_PROXY}.
     * @throws UnsupportedOperationException if no single proxy can front this topology
     */
    default RedisFaultProxy startFaultProxy() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot be fronted by one proxy");
    }

    /**
     * The {@code spring.data.redis.*} properties that connect an application to this
     * Redis through {@code proxy}.
     */
    default List<String> springPropertiesThrough(RedisFaultProxy proxy) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot be fronted by one proxy");
    }

    @Override
    void close();

}
