package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A failover without Sentinel that loses a write the master acknowledged, step by step.
 */
class ReplicaFailoverTest {

    private RedisTestServer master;

    private RedisTestServer replica;

    @BeforeEach
    void startMasterAndReplica() {
        master = RedisTestServer.start();
        replica = RedisTestServer.startReplicaOf(master);
    }

    @AfterEach
    void closeBoth() {
        replica.close();
        master.close();
    }

    @Test
    void aWriteAcknowledgedByTheMasterAfterTheCutIsMissingOnThePromotedReplica() {
        master.set("before-cut", "1");
        ReplicaFailover failover = ReplicaFailover.of(master, replica);

        failover.cutReplication();
        master.set("after-cut", "1");
        assertThat(master.get("after-cut")).as("the master acknowledged and holds it").isEqualTo("1");
        failover.killMasterAndPromoteReplica();

        assertThat(master.isRunning()).isFalse();
        assertThat(replica.infoValue("replication", "role")).isEqualTo("master");
        assertThat(replica.get("before-cut")).isEqualTo("1");
        assertThat(replica.get("after-cut")).isNull();
    }

    @Test
    void waitForOneReplicaReturnsOneBeforeTheCutAndZeroWhileTheReplicaIsCutOff() throws IOException {
        ReplicaFailover failover = ReplicaFailover.of(master, replica);
        try (RespConnection writer = master.openConnection()) {
            writer.command("SET", "lock:{order-1}", "token-a", "NX", "PX", "30000");
            assertThat(writer.command("WAIT", "1", "2000")).isEqualTo(1L);

            failover.cutReplication();
            writer.command("SET", "lock:{order-2}", "token-a", "NX", "PX", "30000");

            assertThat(writer.command("WAIT", "1", "200")).isEqualTo(0L);
        }
        assertThat(master.replicaAckOffsets()).as("the master no longer has a replica to ask").isEmpty();
        assertThat(replica.isPaused()).isTrue();
    }

    @Test
    void secondClientTakesTheSameLockOnThePromotedReplica() throws IOException {
        ReplicaFailover failover = ReplicaFailover.of(master, replica);
        failover.cutReplication();
        try (RespConnection first = master.openConnection()) {
            assertThat(first.command("SET", "lock:{order-42}", "token-a", "NX", "PX", "30000")).isEqualTo("OK");
            assertThat(first.command("WAIT", "1", "100")).isEqualTo(0L);
        }

        failover.killMasterAndPromoteReplica();

        try (RespConnection second = replica.openConnection()) {
            assertThat(second.command("SET", "lock:{order-42}", "token-b", "NX", "PX", "30000")).isEqualTo("OK");
        }
        assertThat(replica.get("lock:{order-42}")).isEqualTo("token-b");
    }

    @Test
    void offsetsShowWhatTheReplicaAcknowledgedAndThatThePromotedReplicaFellBehind() {
        master.set("k", "v");
        replica.awaitCaughtUpWith(master, Duration.ofSeconds(5));
        assertThat(replica.replicationOffset()).isGreaterThanOrEqualTo(master.replicationOffset());
        assertThat(master.replicaAckOffsets()).containsOnlyKeys(replica.port());

        ReplicaFailover failover = ReplicaFailover.of(master, replica);
        failover.cutReplication();
        master.set("k", "lost");
        long acknowledgedByTheMaster = master.replicationOffset();
        failover.killMasterAndPromoteReplica();

        assertThat(replica.replicationOffset()).isLessThan(acknowledgedByTheMaster);
        assertThat(replica.get("k")).isEqualTo("v");
    }

    @Test
    void ofRejectsAServerThatIsNotAReplicaOfTheMaster() {
        try (RedisTestServer stranger = RedisTestServer.start()) {
            assertThatThrownBy(() -> ReplicaFailover.of(master, stranger)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not a replica of");
        }
    }

}
