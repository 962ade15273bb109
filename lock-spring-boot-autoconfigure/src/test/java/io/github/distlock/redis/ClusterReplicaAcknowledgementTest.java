package io.github.distlock.redis;

import static io.github.distlock.redis.LockApplication.clusterNodes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.ReplicaAcknowledgementException;
import io.github.distlock.testsupport.RedisTestCluster;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.RespConnection;

/**
 * {@code distributed-lock.replica-acks} on a Redis Cluster of two masters, the first with
 * a replica and the second without: {@code WAIT} has no key, so the Lettuce backend must
 * send it (with its confirming write) on the connection to the master of the lock's slot,
 * and a lock on the master without a replica must fail. Jedis cannot put the write and
 * the {@code WAIT} on one node connection through Spring Data, so it refuses at startup.
 */
@TestInstance(Lifecycle.PER_CLASS)
class ClusterReplicaAcknowledgementTest {

    private RedisTestCluster cluster;

    private RedisTestServer replicated;

    private RedisTestServer unreplicated;

    private RedisTestServer replica;

    private LockApplication app;

    @BeforeAll
    void startClusterWithOneReplica() {
        cluster = RedisTestCluster.start(2);
        replicated = cluster.node(0);
        unreplicated = cluster.node(1);
        replica = RedisTestServer.builder()
            .clusterEnabled()
            .args("--cluster-node-timeout", Integer.toString(RedisTestCluster.NODE_TIMEOUT_MILLIS))
            .start();
        String masterId = (String) replicated.command("CLUSTER", "MYID");
        replica.command("CLUSTER", "MEET", replicated.host(), Integer.toString(replicated.port()));
        await().atMost(Duration.ofSeconds(20))
            .until(() -> ((String) replica.command("CLUSTER", "NODES")).contains(masterId));
        replica.command("CLUSTER", "REPLICATE", masterId);
        await().atMost(Duration.ofSeconds(20))
            .until(() -> replicated.info("replication").contains("port=" + replica.port() + ",state=online"));
        // The replica answers reads (readFromReplica) only once gossip has told it of
        // every master: until then it
        // replies CLUSTERDOWN, which a loaded machine showed can outlast the replication
        // hand-shake.
        await().atMost(Duration.ofSeconds(20))
            .until(() -> ((String) replica.command("CLUSTER", "INFO")).contains("cluster_state:ok"));
        app = LockApplication.start(clusterNodes(cluster.hostAndPorts()), "distributed-lock.replica-acks=1",
                "distributed-lock.replica-ack-timeout=1s");
        // A cold Cluster connection (topology discovery included) can take longer than
        // one operation timeout
        // on a busy machine; the tests are about what follows it.
        String warmUp = nameOn(replicated);
        await().atMost(Duration.ofSeconds(30))
            .ignoreExceptions()
            .until(() -> app.lockService()
                .tryLock(LockRequest.of(warmUp).withWaitTime(Duration.ZERO))
                .map(LockHandle::release)
                .orElse(false));
    }

    @AfterAll
    void stop() {
        if (app != null) {
            app.close();
        }
        if (replica != null) {
            replica.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void resetStats() {
        replicated.resetStats();
        unreplicated.resetStats();
    }

    @Test
    void aLockOnTheMasterWithAReplicaIsOnTheReplicaWhenTheAcquisitionReturns() {
        String name = nameOn(replicated);

        LockHandle handle = app.lockService().lock(LockRequest.of(name).withWaitTime(Duration.ZERO));

        String key = "lock:{" + name + "}";
        assertThat(handle.isHeld()).isTrue();
        assertThat(readFromReplica(key)).isNotNull().isEqualTo(replicated.get(key));
        // WAIT went to the lock's master, not to whichever node a keyless command would
        // reach.
        assertThat(replicated.commandCalls("wait")).isEqualTo(1);
        assertThat(unreplicated.commandCalls("wait")).isZero();
        assertThat(handle.release()).isTrue();
    }

    @Test
    void aLockOnTheMasterWithoutAReplicaFailsWithReplicaAcknowledgementExceptionAndIsReleased() {
        String name = nameOn(unreplicated);

        assertThatThrownBy(() -> app.lockService().lock(LockRequest.of(name).withWaitTime(Duration.ZERO)))
            .isInstanceOfSatisfying(ReplicaAcknowledgementException.class, ex -> {
                assertThat(ex.getRequestedAcks()).isEqualTo(1);
                assertThat(ex.getReceivedAcks()).isZero();
            });
        assertThat(unreplicated.get("lock:{" + name + "}")).isNull();
        assertThat(unreplicated.commandCalls("wait")).isEqualTo(1);
    }

    @Test
    void anAnnotatedMethodWhoseLockNoReplicaConfirmsDoesNotRunAndGetsTheFailure() {
        String name = nameOn(unreplicated);
        AtomicBoolean ran = new AtomicBoolean();

        // The default failure strategy, THROW, hands the acquisition failure to the
        // caller.
        assertThatThrownBy(() -> app.guardedWork().run(name, () -> ran.getAndSet(true)))
            .isInstanceOf(ReplicaAcknowledgementException.class);
        assertThat(ran).isFalse();
        assertThat(unreplicated.get("lock:{" + name + "}")).isNull();
    }

    @Test
    void renewalsOnTheClusterAreConfirmedByTheLockMastersReplica() {
        String name = nameOn(replicated);
        LockHandle handle = app.lockService()
            .lock(LockRequest.of(name).withTtl(Duration.ofMillis(900)).withWaitTime(Duration.ZERO));

        // Renewed every 300 ms, each round confirmed on the master of the lock's slot.
        await().atMost(Duration.ofSeconds(10)).until(() -> replicated.commandCalls("wait") >= 4);

        assertThat(handle.isHeld()).isTrue();
        assertThat(app.lostLeases()).isEmpty();
        assertThat(unreplicated.commandCalls("wait")).isZero();
        assertThat(handle.release()).isTrue();
    }

    @Test
    void onJedisReplicaAcksFailTheStartupNamingThePropertyAndTheReason() {
        assertThatThrownBy(() -> LockApplication.start(clusterNodes(cluster.hostAndPorts()),
                "spring.data.redis.client-type=jedis", "distributed-lock.replica-acks=1"))
            .rootCause()
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("distributed-lock.replica-acks=1 is not supported on a Redis Cluster")
            .hasMessageContaining("WAIT counts only the writes of the connection it runs on")
            .hasMessageContaining("Use Lettuce");
    }

    /** A lock name whose key lives on {@code master}. */
    private String nameOn(RedisTestServer master) {
        for (int i = 0;; i++) {
            String name = "order-" + i;
            if (cluster.nodeForKey("lock:{" + name + "}") == master) {
                return name;
            }
        }
    }

    /**
     * {@code GET} on the replica itself: {@code READONLY} lets a Cluster replica answer
     * for its master's slots.
     */
    private String readFromReplica(String key) {
        try (RespConnection connection = replica.openConnection()) {
            connection.command("READONLY");
            return (String) connection.command("GET", key);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

}
