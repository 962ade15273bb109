package io.github.distlock.redis;

import static io.github.distlock.redis.LockApplication.clusterNodes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.RedisHandOverNotifications.Mode;
import io.github.distlock.testsupport.RedisClusterExtension;
import io.github.distlock.testsupport.RedisTestCluster;
import io.github.distlock.testsupport.RedisTestServer;
import io.lettuce.core.cluster.SlotHash;

/**
 * Release notifications in a real 3-master Redis 7 Cluster: on Lettuce a release
 * announces a hand-over with {@code SPUBLISH} on the lock's slot channel, which only the
 * owning master forwards, and the waiter's instance {@code SSUBSCRIBE}s to that slot on
 * that master; nothing goes over the global channel. A migrated slot is subscribed again
 * on its new owner. Jedis, and {@code distributed-lock.cluster-notifications=global},
 * keep the global channel.
 *
 * <p>
 * "Woken by the message" is shown by counting, not timing: once the waiter is parked, the
 * only script that runs on the lock's master until the waiter holds the lock is the
 * release itself. A waiter that found out by polling would have run one more acquire
 * script.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(OutputCaptureExtension.class)
class ShardedReleaseNotificationTest {

    private static final String PREFIX = "lock:";

    private static final String GLOBAL_CHANNEL = HandOverSubscriber.handOverChannel(PREFIX);

    private static final Duration TTL = Duration.ofSeconds(30);

    @RegisterExtension
    static final RedisClusterExtension clusterExtension = new RedisClusterExtension();

    private RedisTestCluster cluster;

    private LockApplication holder;

    private LockApplication waiter;

    private final List<LockApplication> more = new ArrayList<>();

    private final AtomicReference<Thread> waiterThread = new AtomicReference<>();

    private final ExecutorService waiterPool = Executors.newSingleThreadExecutor(task -> {
        Thread thread = new Thread(task, "waiter");
        waiterThread.set(thread);
        return thread;
    });

    @BeforeAll
    void startTwoInstances() {
        cluster = clusterExtension.cluster();
        holder = start();
        waiter = start();
    }

    @AfterAll
    void stopInstances() {
        waiterPool.shutdownNow();
        if (holder != null) {
            holder.close();
        }
        if (waiter != null) {
            waiter.close();
        }
    }

    /**
     * Every node has release.lua already, so a release is one {@code EVALSHA}: counting
     * scripts must not see the {@code EVALSHA} + {@code EVAL} of a node's first release.
     */
    @BeforeEach
    void emptyClusterThatKnowsTheReleaseScript() {
        cluster.awaitClusterOk(Duration.ofSeconds(30));
        String release = new String(LockScripts.RELEASE.sourceBytes(), StandardCharsets.UTF_8);
        for (RedisTestServer node : cluster.nodes()) {
            node.flushAll();
            node.command("SCRIPT", "LOAD", release);
        }
    }

    @AfterEach
    void stopExtraInstances() {
        more.forEach(LockApplication::close);
        more.clear();
    }

    private LockApplication start(String... properties) {
        List<String> all = new ArrayList<>(List.of(clusterNodes(cluster.hostAndPorts())));
        all.addAll(List.of(properties));
        return LockApplication.start(all.toArray(String[]::new));
    }

    private LockApplication startExtra(String... properties) {
        LockApplication application = start(properties);
        more.add(application);
        return application;
    }

    @Test
    void onARedis7ClusterReleasesAreShardedAndTheChoiceIsLogged(CapturedOutput output) {
        LockApplication application = startExtra();
        RedisHandOverNotifications notifications = application.bean(RedisHandOverNotifications.class);

        await().atMost(Duration.ofSeconds(10)).until(() -> notifications.mode() != null);

        assertThat(notifications.mode()).isEqualTo(Mode.SHARDED);
        assertThat(output).contains("Lock release notifications: sharded pub/sub (SSUBSCRIBE per hash slot, "
                + "channels lock:released:{<tag>}) on Redis Cluster 7.");
    }

    @Test
    void theShardChannelsHashToTheLocksSlotAsRedisComputesIt() {
        ShardedHandOverChannels channels = new ShardedHandOverChannels(PREFIX);
        for (String name : List.of("order:42", "a}b", "ключ", "handover:7")) {
            LockKey key = RedisKeyNaming.lockKey(PREFIX, name);
            assertThat(cluster.slotOf(channels.channelFor(key))).as(name).isEqualTo(cluster.slotOf(key.storeKey()));
        }
    }

    /**
     * Why each lock gets a channel in its own slot: a script may {@code SPUBLISH} to a
     * shard channel of its keys' slot, and Redis refuses one whose slot another master
     * owns. (Redis 7.0 accepts a different slot of the same master too; the lock's own
     * slot does not depend on that.)
     */
    @Test
    void aScriptMaySpublishOnItsKeysSlotChannelButNotOnAnotherMastersSlot() {
        LockKey key = RedisKeyNaming.lockKey(PREFIX, "order:42");
        RedisTestServer owner = cluster.nodeForKey(key.storeKey());
        ShardedHandOverChannels channels = new ShardedHandOverChannels(PREFIX);
        int foreignSlot = 0;
        while (cluster.nodeForSlot(foreignSlot) == owner) {
            foreignSlot++;
        }
        String script = "redis.call('SET', KEYS[1], 'x') return redis.call('SPUBLISH', ARGV[1], 'hello')";

        assertThat(owner.command("EVAL", script, "1", key.storeKey(), channels.channelFor(key))).isEqualTo(0L);
        String foreign = channels.channelOf(foreignSlot);
        assertThatThrownBy(() -> owner.command("EVAL", script, "1", key.storeKey(), foreign))
            .hasMessageContaining("non local key");
    }

    @Test
    void aReleaseWakesTheWaiterWithOneSpublishOnTheLocksMasterAndNothingElsewhere() throws Exception {
        String name = "order:42";
        LockKey key = RedisKeyNaming.lockKey(PREFIX, name);
        RedisTestServer owner = cluster.nodeForKey(key.storeKey());
        String channel = new ShardedHandOverChannels(PREFIX).channelFor(key);
        cluster.nodes().forEach(RedisTestServer::resetStats);
        LockHandle held = holder.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken());

        Future<LockHandle> waiting = wait(waiter.lockService(), name);
        awaitParkedAndTrusting(waiter, key, owner);

        assertThat(shardSubscribers(owner, channel)).as("the waiter's instance subscribed on the lock's master")
            .isEqualTo(1);
        for (RedisTestServer node : cluster.nodes()) {
            if (node != owner) {
                assertThat(shardSubscribers(node, channel)).as("shard subscribers on %s", node).isZero();
            }
            assertThat(node.subscriberCount(GLOBAL_CHANNEL)).as("global subscribers on %s", node).isZero();
        }
        long scriptsBefore = owner.scriptCalls();

        assertThat(held.release()).isTrue();
        LockHandle handedOver = waiting.get(20, TimeUnit.SECONDS);

        assertThat(owner.scriptCalls() - scriptsBefore)
            .as("scripts from the release to the waiter's acquisition: "
                    + "the release only, as the message woke the waiter")
            .isEqualTo(1);
        assertThat(handedOver.isHeld()).isTrue();
        assertThat(handedOver.issuedFencingToken()).as("a hand-over comes with its token").isPresent();
        assertThat(handedOver.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(owner.commandCalls("spublish")).as("SPUBLISH on the lock's master").isEqualTo(1);
        for (RedisTestServer node : cluster.nodes()) {
            assertThat(node.commandCalls("publish")).as("PUBLISH on %s", node).isZero();
            if (node != owner) {
                assertThat(node.commandCalls("spublish")).as("SPUBLISH on %s", node).isZero();
            }
        }
        assertThat(handedOver.release()).isTrue();
    }

    /**
     * Subscriptions are per slot and kept: waits on two keys of one slot cost one
     * {@code SSUBSCRIBE} on that slot's master, a key of another slot one more, and a
     * second round of the same waits none at all.
     */
    @Test
    void waitsSubscribeOncePerSlotOnItsMasterOnly() {
        List<String> sameSlot = namesInOneSlot("same-slot:", 2);
        String otherSlot = "other-slot:1";
        int slot = cluster.slotOf(RedisKeyNaming.lockKey(PREFIX, sameSlot.get(0)).storeKey());
        assertThat(cluster.slotOf(RedisKeyNaming.lockKey(PREFIX, otherSlot).storeKey())).isNotEqualTo(slot);
        RedisTestServer owner = cluster.nodeForSlot(slot);
        RedisHandOverNotifications notifications = waiter.bean(RedisHandOverNotifications.class);
        int slotsBefore = notifications.subscribedSlots();
        cluster.nodes().forEach(RedisTestServer::resetStats);
        List<String> names = List.of(sameSlot.get(0), sameSlot.get(1), otherSlot);

        for (int round = 0; round < 2; round++) {
            for (String name : names) {
                try (LockHandle held = holder.lockService()
                    .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO))) {
                    assertThat(waiter.lockService().tryLock(LockRequest.of(name).withWaitTime(Duration.ofMillis(300))))
                        .as("%s is held", name)
                        .isEmpty();
                }
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> notifications.subscribedSlots() == slotsBefore + 2);
        }

        assertThat(owner.commandCalls("ssubscribe")).as("SSUBSCRIBE on the master of both keys' slot").isEqualTo(1);
        assertThat(cluster.nodes().stream().mapToLong(node -> node.commandCalls("ssubscribe")).sum())
            .as("SSUBSCRIBE in all: one per slot")
            .isEqualTo(2);
        assertThat(cluster.nodes().stream().mapToLong(node -> node.commandCalls("sunsubscribe")).sum()).isZero();
    }

    @Test
    void aWaiterWhoseSlotMigratesIsSubscribedOnTheNewMasterAndWokenThere() throws Exception {
        String name = "migrating:1";
        LockKey key = RedisKeyNaming.lockKey(PREFIX, name);
        int slot = cluster.slotOf(key.storeKey());
        RedisTestServer from = cluster.nodeForSlot(slot);
        RedisTestServer to = cluster.nodes().stream().filter(node -> node != from).findFirst().orElseThrow();
        String channel = new ShardedHandOverChannels(PREFIX).channelFor(key);
        LockHandle held = holder.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken());
        Future<LockHandle> waiting = wait(waiter.lockService(), name);
        awaitParkedAndTrusting(waiter, key, from);
        assertThat(shardSubscribers(from, channel)).isEqualTo(1);

        cluster.migrateSlot(slot, to);

        // Redis ended the subscription on the old master; the instance subscribed again
        // on the new one.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(shardSubscribers(from, channel)).as("on the old master").isZero();
            assertThat(shardSubscribers(to, channel)).as("on the new master").isEqualTo(1);
        });
        awaitParkedAndTrusting(waiter, key, to);
        to.resetStats();
        long scriptsBefore = to.scriptCalls();

        assertThat(held.release()).isTrue();
        LockHandle handedOver = waiting.get(20, TimeUnit.SECONDS);

        assertThat(to.scriptCalls() - scriptsBefore).as("the release only: the message woke the waiter").isEqualTo(1);
        assertThat(to.commandCalls("spublish")).isEqualTo(1);
        assertThat(handedOver.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(handedOver.release()).isTrue();
    }

    @Test
    void withClusterNotificationsGlobalReleasesPublishOnTheGlobalChannel(CapturedOutput output) throws Exception {
        LockApplication globalHolder = startExtra("distributed-lock.cluster-notifications=global");
        LockApplication globalWaiter = startExtra("distributed-lock.cluster-notifications=global");
        assertThat(globalWaiter.bean(RedisHandOverNotifications.class).mode()).isEqualTo(Mode.GLOBAL);
        assertThat(output).contains("Lock release notifications: pub/sub on channel 'lock:released' "
                + "(distributed-lock.cluster-notifications=global)");
        String name = "global:1";
        LockKey key = RedisKeyNaming.lockKey(PREFIX, name);
        RedisTestServer owner = cluster.nodeForKey(key.storeKey());
        cluster.nodes().forEach(RedisTestServer::resetStats);
        LockHandle held = globalHolder.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken());

        Future<LockHandle> waiting = wait(globalWaiter.lockService(), name);
        awaitParkedAndTrusting(globalWaiter, key, owner);
        assertThat(cluster.nodes().stream().mapToLong(node -> node.subscriberCount(GLOBAL_CHANNEL)).sum())
            .as("global subscribers")
            .isEqualTo(1);
        long scriptsBefore = owner.scriptCalls();

        assertThat(held.release()).isTrue();
        LockHandle handedOver = waiting.get(20, TimeUnit.SECONDS);

        assertThat(owner.scriptCalls() - scriptsBefore).as("the release only").isEqualTo(1);
        assertThat(owner.commandCalls("publish")).isEqualTo(1);
        assertThat(cluster.nodes().stream().mapToLong(node -> node.commandCalls("spublish")).sum()).isZero();
        assertThat(handedOver.release()).isTrue();
    }

    /**
     * Mixed fleets: a release from a Jedis instance publishes on the global channel,
     * which a Lettuce waiter listening per slot does not hear. The hand-over is made in
     * Redis all the same, and the waiter finds it at its next poll: later, never unsafe.
     */
    @Test
    void aJedisReleaseHandsOverToAShardedWaiterWhichFindsItByPolling() throws Exception {
        LockApplication jedis = startExtra("spring.data.redis.client-type=jedis");
        assertThatExceptionOfType(NoSuchBeanDefinitionException.class).as("no sharded pub/sub on Jedis")
            .isThrownBy(() -> jedis.bean(RedisHandOverNotifications.class));
        String name = "mixed:1";
        LockKey key = RedisKeyNaming.lockKey(PREFIX, name);
        RedisTestServer owner = cluster.nodeForKey(key.storeKey());
        cluster.nodes().forEach(RedisTestServer::resetStats);
        LockHandle held = jedis.lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withFencingToken());
        Future<LockHandle> waiting = wait(waiter.lockService(), name);
        awaitParkedAndTrusting(waiter, key, owner);
        long scriptsBefore = owner.scriptCalls();

        assertThat(held.release()).isTrue();
        LockHandle handedOver = waiting.get(20, TimeUnit.SECONDS);

        assertThat(owner.commandCalls("publish")).as("Jedis publishes on the global channel").isEqualTo(1);
        assertThat(owner.commandCalls("spublish")).isZero();
        assertThat(owner.scriptCalls() - scriptsBefore).as("the release, then the waiter's poll that found it")
            .isGreaterThanOrEqualTo(2);
        assertThat(handedOver.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(handedOver.release()).isTrue();
    }

    // ------------------------------------------------------------------------------------------
    // helpers

    private Future<LockHandle> wait(LockService service, String name) {
        return waiterPool
            .submit(() -> service.lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ofSeconds(30))));
    }

    /**
     * Waits until the waiter's instance trusts wake-ups for {@code key}, and the waiter
     * has since made an attempt that began after that (only such attempts trust a
     * wake-up; the first one counted may have checked just before) and is parked: two
     * attempts on the lock's master.
     */
    private void awaitParkedAndTrusting(LockApplication application, LockKey key, RedisTestServer owner) {
        RedisHandOverNotifications notifications = application.bean(RedisHandOverNotifications.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> notifications.isListening(key));
        long scripts = owner.scriptCalls();
        await().atMost(Duration.ofSeconds(10))
            .until(() -> owner.scriptCalls() >= scripts + 2 && waiterThread.get() != null
                    && waiterThread.get().getState() == Thread.State.TIMED_WAITING);
    }

    /** {@code count} lock names whose keys share one hash slot, found by trying names. */
    private List<String> namesInOneSlot(String stem, int count) {
        Map<Integer, List<String>> bySlot = new HashMap<>();
        for (int i = 0;; i++) {
            String name = stem + i;
            List<String> names = bySlot.computeIfAbsent(
                    SlotHash.getSlot(RedisKeyNaming.lockKey(PREFIX, name).storeKey()), s -> new ArrayList<>());
            names.add(name);
            if (names.size() == count) {
                return names;
            }
        }
    }

    private static long shardSubscribers(RedisTestServer node, String channel) {
        List<?> reply = (List<?>) node.command("PUBSUB", "SHARDNUMSUB", channel);
        return (Long) reply.get(1);
    }

}
