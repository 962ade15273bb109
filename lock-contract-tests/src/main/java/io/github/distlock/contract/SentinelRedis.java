package io.github.distlock.contract;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.github.distlock.testsupport.RedisTestSentinelGroup;

/**
 * A Sentinel-managed master (a master, a replica and three Sentinels), as
 * {@code spring.data.redis.sentinel.*} configures it. Keys are read and deleted on
 * whichever node the Sentinels name as the master.
 */
public final class SentinelRedis implements ContractRedis {

    private final RedisTestSentinelGroup group;

    private SentinelRedis(RedisTestSentinelGroup group) {
        this.group = group;
    }

    /** Starts a Sentinel group, closed with this object. */
    public static SentinelRedis start() {
        return new SentinelRedis(RedisTestSentinelGroup.start());
    }

    /** The group, for tests of a subclass that need more than the contract does. */
    public RedisTestSentinelGroup group() {
        return group;
    }

    @Override
    public List<String> springProperties() {
        return List.of("spring.data.redis.sentinel.master=" + group.masterName(),
                "spring.data.redis.sentinel.nodes=" + String.join(",", group.sentinelHostAndPorts()));
    }

    @Override
    public Object command(String key, String... command) {
        return group.master().command(command);
    }

    @Override
    public Set<String> keys(String pattern) {
        return new TreeSet<>(group.master().scan(pattern));
    }

    @Override
    public void reset() {
        group.servers().forEach(server -> server.resume());
        // FLUSHALL replicates, so the replica is emptied too.
        group.master().flushAll();
    }

    @Override
    public void close() {
        group.close();
    }

    @Override
    public String toString() {
        return "sentinel " + group;
    }

}
