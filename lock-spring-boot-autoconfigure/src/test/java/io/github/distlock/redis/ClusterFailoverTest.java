package io.github.distlock.redis;

import static io.github.distlock.redis.LockApplication.clusterNodes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.github.distlock.testsupport.RedisClusterExtension;
import io.github.distlock.testsupport.RedisErrorReplyException;
import io.github.distlock.testsupport.RedisTestCluster;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.RespConnection;
import io.lettuce.core.cluster.SlotHash;

/**
 * {@code CLUSTER FAILOVER} on the replica of the master that owns locks being contended
 * for, held and waited for, while two application instances (Lettuce or Jedis,
 * {@code spring.data.redis.cluster.nodes}) use them: the same drill and expectations as
 * {@link SentinelFailoverTest} ({@link FailoverDrill}), on a 3-master cluster with a
 * replica per master. Every lock of the drill is on the master that fails over. Each run
 * prints a {@code FAILOVER-FIGURES cluster ...} line.
 *
 * <p>
 * What a manual Cluster failover does to the lock: the master stops taking writes, its
 * replica catches up and takes over the slots, and the old master then answers
 * {@code MOVED}; connections stay open, so clients follow the redirect, and a
 * subscription stays where it was: a broadcast reaches every node, a shard message every
 * node of its shard, the old master included.
 */
class ClusterFailoverTest {

    @RegisterExtension
    static final RedisClusterExtension clusterExtension = new RedisClusterExtension(3, 1);

    /**
     * Lettuce with and without replica acks; Jedis without, as the Spring Data backend
     * does not confirm locks with replica acks on a Cluster.
     */
    static Stream<Arguments> clientsAndAcks() {
        return Stream.of(Arguments.of("lettuce", 0), Arguments.of("lettuce", 1), Arguments.of("jedis", 0));
    }

    @ParameterizedTest(name = "{0}, replica-acks={1}")
    @MethodSource("clientsAndAcks")
    void lockingStaysExclusiveAndResumesThroughAClusterFailover(String client, int acks) throws Exception {
        RedisTestCluster cluster = clusterExtension.cluster();
        cluster.masters().forEach(RedisTestServer::flushAll);
        RedisTestServer failing = cluster.masters().get(0);
        RedisTestServer replica = cluster.replicasOf(failing).get(0);
        List<String> properties = new ArrayList<>(
                List.of(clusterNodes(cluster.hostAndPorts()), "spring.data.redis.client-type=" + client));
        properties.addAll(FailoverDrill.replicaAcksProperties(acks));
        String[] instance = properties.toArray(String[]::new);

        try (LockApplication first = LockApplication.start(instance);
                LockApplication second = LockApplication.start(instance);
                FailoverDrill drill = new FailoverDrill("cluster", client, acks, List.of(first, second),
                        new ClusterTopology(cluster, failing, replica))) {
            try {
                drill.warmUp();
                List<String> held = drill.names("held:", 8);
                drill.hold(first, held.subList(0, 4));
                drill.hold(second, held.subList(4, 8));
                drill.waitFor(second, held.subList(0, 2));
                drill.waitFor(first, held.subList(4, 6));
                drill.assertSubscribed("before the failover");
                drill.contend(drill.names("contended:", 3), 8);
                drill.probe();
                await().pollDelay(Duration.ofSeconds(1)).until(() -> true);

                // The replica takes the slots once the old master stopped taking writes:
                // from then on, a lock
                // command can only succeed on the new master.
                drill.monitor(now -> {
                    if (FailoverDrill.role("master").test(replica)) {
                        drill.switched(now);
                        drill.cutOver(now);
                        return true;
                    }
                    return false;
                });
                drill.failoverStarts();
                RedisTestServer promoted = cluster.failover(failing);
                assertThat(promoted).isSameAs(replica);
                drill.tryToTakeOverProbes();

                await().pollDelay(Duration.ofSeconds(2)).until(() -> true);
                drill.stopTraffic();
                drill.assertSubscribed("after the failover");
                drill.assertHeldLocksKeptOrReportedLost();
                drill.assertResumed();
                drill.assertNoViolationWithReplicaAcks();
                drill.releaseHeldAndServeWaiters();
                drill.assertHandOverWakesWaiter(first, second, drill.names("handover:a", 1).get(0));
                drill.assertHandOverWakesWaiter(second, first, drill.names("handover:b", 1).get(0));
            }
            finally {
                System.out.println(drill.figures());
                System.out.println(drill.errorSamples());
            }
        }
    }

    /**
     * The drill's locks are those on the failing master's slots; a key is read on
     * whichever node owns its slot now. Subscriptions may be on any node: Cluster pub/sub
     * reaches every node, so they are counted over all of them.
     */
    private record ClusterTopology(RedisTestCluster cluster, RedisTestServer failing,
            RedisTestServer replica) implements FailoverDrill.Topology {

        @Override
        public boolean failsOver(String lockName) {
            String redisKey = RedisKeyNaming.lockKey("lock:", lockName).storeKey();
            RedisTestServer owner = cluster.nodeForSlot(SlotHash.getSlot(redisKey));
            return owner == failing || owner == replica;
        }

        @Override
        public Map<String, String> read(Collection<String> redisKeys) {
            Map<RedisTestServer, List<String>> byMaster = new LinkedHashMap<>();
            redisKeys.forEach(key -> byMaster.computeIfAbsent(masterOf(key), master -> new ArrayList<>()).add(key));
            Map<String, String> values = new HashMap<>();
            byMaster.forEach((master, keys) -> {
                try (RespConnection connection = RespConnection.open(master.host(), master.port(),
                        Duration.ofSeconds(5))) {
                    for (String key : keys) {
                        values.put(key, (String) connection.command("GET", key));
                    }
                }
                catch (IOException ex) {
                    throw new UncheckedIOException(ex);
                }
            });
            return values;
        }

        @Override
        public RedisTestServer masterOf(String redisKey) {
            return cluster.nodeForSlot(SlotHash.getSlot(redisKey));
        }

        /**
         * Subscriptions on any node, to the broadcast channel or to its per-slot shard
         * channels {@code <channel>:{...}}: a manual failover leaves the old master in
         * the cluster as a replica with its connections open, and Redis delivers a
         * broadcast to every node and a shard message to every node of the shard, so a
         * subscription left there still hears every release. That it does is what the
         * hand-over proof shows.
         */
        @Override
        public long subscribers(String channel) {
            long count = 0;
            for (RedisTestServer node : cluster.nodes()) {
                if (!node.isRunning() || node.isPaused()) {
                    continue;
                }
                count += node.subscriberCount(channel);
                try {
                    for (Object shardChannel : (List<?>) node.command("PUBSUB", "SHARDCHANNELS", channel + ":*")) {
                        List<?> reply = (List<?>) node.command("PUBSUB", "SHARDNUMSUB", (String) shardChannel);
                        count += (Long) reply.get(1);
                    }
                }
                catch (RedisErrorReplyException ex) {
                    // Redis 6.2 has no sharded pub/sub.
                }
            }
            return count;
        }
    }

}
