package io.github.distlock.contract;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import io.github.distlock.testsupport.RedisTestServer;

/**
 * N independent {@code redis-server} masters for a Redlock backend. The side door sees
 * the lock as the majority does: a command runs on every node, and the answer is the one
 * most nodes gave (the median, for numbers: a {@code PTTL} differs by a millisecond from
 * node to node). Deleting a key deletes it everywhere.
 */
public final class RedlockRedis implements ContractRedis {

    private final List<RedisTestServer> nodes;

    private RedlockRedis(List<RedisTestServer> nodes) {
        this.nodes = nodes;
    }

    /** Starts {@code count} servers, closed with this object. */
    public static RedlockRedis start(int count) {
        return new RedlockRedis(RedisTestServer.startMany(count));
    }

    /** The nodes, for tests of a subclass that need more than the contract does. */
    public List<RedisTestServer> nodes() {
        return Collections.unmodifiableList(nodes);
    }

    /**
     * The nodes as {@code distributed-lock.redlock.nodes}, with a node timeout generous
     * enough for a busy build machine; {@code spring.data.redis.*} points at the first
     * node only so that Boot's own (unused) connection factory never reaches for a Redis
     * on the default port. Restart protection is off: these servers started moments ago,
     * and with it every node would rightly withhold its vote until it had been up for the
     * longest lease (30 s by default). The protection has tests of its own
     * ({@code RedlockBackendTest}).
     */
    @Override
    public List<String> springProperties() {
        String uris = nodes.stream().map(RedisTestServer::redisUri).collect(Collectors.joining(","));
        return List.of("distributed-lock.redlock.nodes=" + uris, "distributed-lock.redlock.node-timeout=500ms",
                "distributed-lock.redlock.restart-protection=false", "spring.data.redis.host=" + nodes.get(0).host(),
                "spring.data.redis.port=" + nodes.get(0).port());
    }

    @Override
    public Object command(String key, String... command) {
        List<Object> replies = new ArrayList<>(nodes.size());
        for (RedisTestServer node : nodes) {
            replies.add(node.command(command));
        }
        if (replies.stream().allMatch(Long.class::isInstance)) {
            List<Long> numbers = replies.stream().map(Long.class::cast).sorted().toList();
            return numbers.get(numbers.size() / 2);
        }
        Map<Object, Integer> votes = new HashMap<>();
        replies.forEach(reply -> votes.merge(reply == null ? "(nil)" : reply, 1, Integer::sum));
        Object majority = Collections.max(votes.entrySet(), Map.Entry.comparingByValue()).getKey();
        return "(nil)".equals(majority) ? null : majority;
    }

    /** The keys that a majority of nodes have. */
    @Override
    public Set<String> keys(String pattern) {
        Map<String, Integer> counts = new HashMap<>();
        for (RedisTestServer node : nodes) {
            node.scan(pattern).forEach(key -> counts.merge(key, 1, Integer::sum));
        }
        return counts.entrySet()
            .stream()
            .filter(entry -> entry.getValue() > nodes.size() / 2)
            .map(Map.Entry::getKey)
            .collect(Collectors.toCollection(TreeSet::new));
    }

    @Override
    public void reset() {
        for (RedisTestServer node : nodes) {
            node.resume();
            node.flushAll();
        }
    }

    @Override
    public void close() {
        nodes.forEach(RedisTestServer::close);
    }

    @Override
    public String toString() {
        return "Redlock over " + nodes;
    }

}
