package io.github.distlock.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A Redis topology ({@link ContractRedis}) with the layout of the backend's keys
 * ({@link LockKeyspace}): the side door is plain Redis commands on the node that owns
 * each key.
 */
public final class RedisContractStore implements ContractStore {

    private final ContractRedis redis;

    private final LockKeyspace keyspace;

    public RedisContractStore(ContractRedis redis, LockKeyspace keyspace) {
        this.redis = redis;
        this.keyspace = keyspace;
    }

    /**
     * The Redis itself, for what only Redis has: a fault proxy, command statistics, a
     * topology's own tests.
     */
    public ContractRedis redis() {
        return redis;
    }

    /** Where the backend keeps each lock. */
    public LockKeyspace keyspace() {
        return keyspace;
    }

    @Override
    public List<String> applicationProperties() {
        return redis.springProperties();
    }

    @Override
    public boolean isHeld(String name) {
        String key = keyspace.lockKey(name);
        return Long.valueOf(1).equals(redis.command(key, "EXISTS", key));
    }

    @Override
    public long leaseLeftMillis(String name) {
        String key = keyspace.lockKey(name);
        return (Long) redis.command(key, "PTTL", key);
    }

    @Override
    public void takeAway(String name) {
        String key = keyspace.lockKey(name);
        assertThat(redis.command(key, "DEL", key)).as("deleted %s", key).isEqualTo(1L);
    }

    @Override
    public long queueLength(String name) {
        String key = keyspace.queueKey(name);
        return (Long) redis.command(key, "ZCARD", key);
    }

    @Override
    public Set<String> leftovers(String name) {
        return redis.keys(keyspace.statePattern(name))
            .stream()
            .filter(key -> !keyspace.isCounter(key))
            .collect(Collectors.toSet());
    }

    @Override
    public void evictFencingCounter(String name) {
        Set<String> counters = redis.keys(keyspace.statePattern(name))
            .stream()
            .filter(keyspace::isCounter)
            .collect(Collectors.toSet());
        assertThat(counters).as("the fencing counter").isNotEmpty();
        counters.forEach(counter -> redis.command(counter, "DEL", counter));
    }

    /**
     * How many SET commands the Redis that holds lock {@code name} has run
     * ({@code INFO commandstats}).
     */
    long setCalls(String name) {
        String stats = String.valueOf(redis.command(keyspace.lockKey(name), "INFO", "commandstats"));
        for (String line : stats.split("\r?\n")) {
            if (line.startsWith("cmdstat_set:")) {
                String calls = line.substring(line.indexOf("calls=") + "calls=".length());
                return Long.parseLong(calls.substring(0, calls.indexOf(',')));
            }
        }
        return 0;
    }

    @Override
    public void reset() {
        redis.reset();
    }

    @Override
    public void close() {
        redis.close();
    }

    @Override
    public String toString() {
        return redis.toString();
    }

}
