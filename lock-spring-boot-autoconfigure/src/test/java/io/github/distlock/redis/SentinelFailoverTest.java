package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.github.distlock.testsupport.RedisSentinelExtension;
import io.github.distlock.testsupport.RedisTestSentinelGroup;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.RespConnection;

/**
 * {@code SENTINEL FAILOVER} while two application instances (Lettuce or Jedis,
 * {@code spring.data.redis.sentinel.*}) contend for locks, hold some and wait for others:
 * see {@link FailoverDrill} for what runs and how it is judged. With
 * {@code distributed-lock.replica-acks=1} no two holders may ever overlap; without, the
 * overlaps are counted and reported. Each run prints a
 * {@code FAILOVER-FIGURES sentinel ...} line.
 *
 * <p>
 * What a Sentinel failover does to the lock: Sentinel promotes the replica, then turns
 * the old master, which is still running, into its replica and disconnects its clients;
 * writes the old master accepted in between are lost.
 */
class SentinelFailoverTest {

    @RegisterExtension
    static final RedisSentinelExtension sentinel = new RedisSentinelExtension().resetBeforeEach();

    static Stream<Arguments> clientsAndAcks() {
        return Stream.of(Arguments.of("lettuce", 0), Arguments.of("lettuce", 1), Arguments.of("jedis", 0),
                Arguments.of("jedis", 1));
    }

    @ParameterizedTest(name = "{0}, replica-acks={1}")
    @MethodSource("clientsAndAcks")
    void lockingStaysExclusiveAndResumesThroughASentinelFailover(String client, int acks) throws Exception {
        RedisTestSentinelGroup group = sentinel.group();
        List<String> properties = new ArrayList<>(List.of("spring.data.redis.client-type=" + client,
                "spring.data.redis.sentinel.master=" + group.masterName(),
                "spring.data.redis.sentinel.nodes=" + String.join(",", group.sentinelHostAndPorts())));
        properties.addAll(FailoverDrill.replicaAcksProperties(acks));
        String[] instance = properties.toArray(String[]::new);

        try (LockApplication first = LockApplication.start(instance);
                LockApplication second = LockApplication.start(instance);
                FailoverDrill drill = new FailoverDrill("sentinel", client, acks, List.of(first, second),
                        new SentinelTopology(group))) {
            try {
                drill.warmUp();
                drill.hold(first, List.of("held:0", "held:1", "held:2", "held:3"));
                drill.hold(second, List.of("held:4", "held:5", "held:6", "held:7"));
                drill.waitFor(second, List.of("held:0", "held:1"));
                drill.waitFor(first, List.of("held:4", "held:5"));
                drill.assertSubscribed("before the failover");
                drill.contend(List.of("contended:0", "contended:1", "contended:2"), 8);
                drill.probe();
                await().pollDelay(Duration.ofSeconds(1)).until(() -> true);

                RedisTestServer before = group.master();
                String beforeAddress = before.host() + ":" + before.port();
                group.awaitSettled(Duration.ofSeconds(30));
                AtomicBoolean switched = new AtomicBoolean();
                drill.monitor(now -> {
                    if (!switched.get() && !beforeAddress.equals(masterAddressQuietly(group))) {
                        switched.set(true);
                        drill.switched(now);
                    }
                    // Only once the old master is a replica is it sure to refuse lock
                    // writes.
                    if (FailoverDrill.role("slave").test(before)) {
                        drill.cutOver(now);
                        return true;
                    }
                    return false;
                });
                drill.failoverStarts();
                RedisTestServer after = group.failover();
                assertThat(after).isNotSameAs(before);
                drill.tryToTakeOverProbes();

                // Keep going on the new master for a while: resumption, and exclusion
                // after the switch.
                await().pollDelay(Duration.ofSeconds(2)).until(() -> true);
                drill.stopTraffic();
                drill.assertSubscribed("after the failover, on the new master " + after);
                drill.assertHeldLocksKeptOrReportedLost();
                drill.assertResumed();
                drill.assertNoViolationWithReplicaAcks();
                drill.releaseHeldAndServeWaiters();
                drill.assertHandOverWakesWaiter(first, second, "handover:a");
                drill.assertHandOverWakesWaiter(second, first, "handover:b");
            }
            finally {
                System.out.println(drill.figures());
                System.out.println(drill.errorSamples());
            }
        }
    }

    private static String masterAddressQuietly(RedisTestSentinelGroup group) {
        try {
            return group.masterHostAndPort();
        }
        catch (RuntimeException ex) {
            return null;
        }
    }

    /** Every key lives on the master the Sentinels name. */
    private record SentinelTopology(RedisTestSentinelGroup group) implements FailoverDrill.Topology {

        @Override
        public boolean failsOver(String lockName) {
            return true;
        }

        @Override
        public Map<String, String> read(Collection<String> redisKeys) {
            RedisTestServer master = group.master();
            Map<String, String> values = new HashMap<>();
            try (RespConnection connection = RespConnection.open(master.host(), master.port(), Duration.ofSeconds(5))) {
                for (String key : redisKeys) {
                    values.put(key, (String) connection.command("GET", key));
                }
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            return values;
        }

        @Override
        public RedisTestServer masterOf(String redisKey) {
            return group.master();
        }

        @Override
        public long subscribers(String channel) {
            return group.master().subscriberCount(channel);
        }
    }

}
